// The sign-in view: an operator's bearer token, checked against GET /session and kept for this tab only.
import { describeError, signIn } from './api.js';
import { h, notify, show } from './dom.js';
import type { Session } from './types.js';

/** `why`: a reason the tab was signed out, shown until the next attempt. */
export function signInView(onSignedIn: (session: Session) => void, why?: string): () => void {
  const input = h('input', {
    id: 'token',
    name: 'token',
    type: 'password',
    autocomplete: 'off',
    required: true,
    spellcheck: 'false',
  });
  const error = h('p', { class: 'error', role: 'alert', id: 'sign-in-error' }, why);
  const button = h('button', { type: 'submit' }, 'Sign in');
  const form = h(
    'form',
    { class: 'card sign-in', 'aria-labelledby': 'sign-in-title' },
    h('h1', { id: 'sign-in-title' }, 'Sign in'),
    h('label', { for: 'token' }, 'Operator token'),
    input,
    h(
      'p',
      { class: 'muted' },
      'The token is sent as a bearer token to this server only, and kept in this browser tab until it is closed or you sign out.',
    ),
    button,
    error,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    error.textContent = '';
    button.disabled = true;
    signIn(input.value.trim()).then(
      (session) => onSignedIn(session),
      (err: unknown) => {
        button.disabled = false;
        error.textContent = `Sign-in refused: ${describeError(err)}`;
      },
    );
  });
  notify('');
  show(form);
  input.focus();
  return () => undefined;
}
