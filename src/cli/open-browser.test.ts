import { describe, expect, it } from 'vitest';
import { hasDisplay, openerCommand } from './open-browser.js';

describe('opening a browser', () => {
  it('uses the platform opener, with the URL as one argument', () => {
    const url = 'https://as.example/authorize?a=1&b=%PATH%';
    expect(openerCommand(url, 'linux')).toEqual(['xdg-open', [url]]);
    expect(openerCommand(url, 'darwin')).toEqual(['open', [url]]);
    expect(openerCommand(url, 'win32')).toEqual(['rundll32', ['url.dll,FileProtocolHandler', url]]);
  });

  it('sees a display in a desktop session, none over SSH or on a bare Linux host', () => {
    expect(hasDisplay({ DISPLAY: ':0' }, 'linux')).toBe(true);
    expect(hasDisplay({ WAYLAND_DISPLAY: 'wayland-0' }, 'linux')).toBe(true);
    expect(hasDisplay({}, 'linux')).toBe(false);
    expect(hasDisplay({}, 'darwin')).toBe(true);
    expect(hasDisplay({ SSH_CONNECTION: '10.0.0.1 22 10.0.0.2 22' }, 'darwin')).toBe(false);
    expect(hasDisplay({ SSH_TTY: '/dev/pts/0' }, 'win32')).toBe(false);
  });
});
