// Building the page: elements made with text nodes only (nothing the server sends is parsed as HTML).

type Attr = string | boolean | undefined | ((event: Event) => void);
export type Child = Node | string | number | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, Attr> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (value === true) el.setAttribute(name, '');
    else if (typeof value === 'string') el.setAttribute(name, value);
  }
  append(el, children);
  return el;
}

export function append(el: Element, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`#${id} is missing from the page`);
  return el as T;
}

/** Replaces what the main area shows. */
export function show(...children: Child[]): void {
  const main = byId('main');
  main.replaceChildren();
  append(main, children);
}

/** A message at the top of the page (errors in red), until the next one. */
export function notify(text: string, kind: 'info' | 'error' = 'info'): void {
  const box = byId('notice');
  box.replaceChildren();
  if (text === '') return;
  box.append(h('p', { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text));
}

/** Asks with the page's dialog; true when the operator confirms (`keep`: the button that declines). */
export function confirmAction(
  title: string,
  text: string,
  action: string,
  keep = 'Keep the task as it is',
): Promise<boolean> {
  const dialog = byId<HTMLDialogElement>('confirm');
  byId('confirm-title').textContent = title;
  byId('confirm-text').textContent = text;
  byId('confirm-ok').textContent = action;
  byId('confirm-keep').textContent = keep;
  dialog.returnValue = '';
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'confirm'), { once: true });
  });
}

const DATE_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** A time as a <time> element: local in the text, ISO in its attribute and title. */
export function time(iso: string | undefined): Child {
  if (iso === undefined) return h('span', { class: 'muted' }, '—');
  return h('time', { datetime: iso, title: iso }, DATE_TIME.format(new Date(iso)));
}

export const statusBadge = (status: string): HTMLElement =>
  h('span', { class: `badge status-${status}`, 'data-status': status }, status.replace('_', ' '));

/** How a finished task ended (a tool error apart from a clean completion); nothing while it runs. */
export const outcomeBadge = (outcome: string | undefined): Child =>
  outcome === undefined
    ? null
    : h('span', { class: `badge outcome-${outcome}`, 'data-outcome': outcome }, outcome.replace('_', ' '));
