// The operators' dashboard, a page of hash routes: #/sign-in, #/overview, #/tasks?filters, #/tasks/<id>, #/flow.
// Signed in, it keeps one event stream open for every view's live updates.
import { SIGNED_OUT, describeError, forget, refreshSession, token } from './api.js';
import { byId, h, notify } from './dom.js';
import { onLiveState, startLive, stopLive } from './live.js';
import { flowView } from './flow.js';
import { overviewView } from './overview.js';
import { signInView } from './sign-in.js';
import { taskDetailView } from './task-detail.js';
import { taskListView } from './task-list.js';
import type { Session } from './types.js';

let leave: () => void = () => undefined;
let session: Session | undefined;
/** Why the tab was signed out, shown once by the sign-in view. */
let signedOutBecause: string | undefined;

function route(): void {
  leave();
  const hash = location.hash.replace(/^#/, '') || '/overview';
  const q = hash.indexOf('?');
  const path = q === -1 ? hash : hash.slice(0, q);
  const params = new URLSearchParams(q === -1 ? '' : hash.slice(q + 1));
  if (session === undefined || path === '/sign-in') {
    leave = signInView(signedIn, signedOutBecause);
    signedOutBecause = undefined;
    return;
  }
  for (const link of document.querySelectorAll<HTMLAnchorElement>('#nav a'))
    link.toggleAttribute('aria-current', path.startsWith(link.hash.slice(1)));
  if (path === '/tasks') leave = taskListView(params);
  else if (path === '/flow') leave = flowView(session);
  else if (path.startsWith('/tasks/'))
    leave = taskDetailView(decodeURIComponent(path.slice('/tasks/'.length)));
  else leave = overviewView();
  byId('main').focus({ preventScroll: true });
}

function signedIn(who: Session): void {
  session = who;
  const tenants =
    who.operator.tenants === 'all' ? 'every tenant' : `tenants ${who.operator.tenants.join(', ')}`;
  byId('nav').hidden = false;
  byId('who').replaceChildren(
    h('span', {}, `${who.principal} @ ${who.tenant} · ${tenants}`),
    h('span', { id: 'live', class: 'live' }),
    h('button', { type: 'button', class: 'secondary', onclick: signOut }, 'Sign out'),
  );
  startLive();
  if (location.hash === '' || location.hash === '#/sign-in') location.hash = '#/overview';
  else route();
}

function signOut(): void {
  stopLive();
  forget();
  session = undefined;
  byId('nav').hidden = true;
  byId('who').replaceChildren();
  location.hash = '#/sign-in';
}

onLiveState((state, why) => {
  const el = document.getElementById('live');
  if (el === null) return;
  el.dataset.state = state;
  el.textContent = state === 'live' ? '● live' : state === 'connecting' ? '○ connecting' : '○ updates off';
  el.title = why ?? '';
});

window.addEventListener('hashchange', route);
window.addEventListener(SIGNED_OUT, (event) => {
  if (session === undefined) return;
  signedOutBecause = `Signed out: ${String((event as CustomEvent<string>).detail)}`;
  signOut();
});
if (token() === null) route();
else
  refreshSession().then(signedIn, (err: unknown) => {
    forget();
    route();
    notify(`Signed out: ${describeError(err)}`, 'error');
  });
