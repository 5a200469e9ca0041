// The translations between undici's shapes and fetch's: request headers read for retryFetch,
// the URL it is given and the path each attempt sends, and response headers both ways.
import { describe, expect, it } from 'vitest';
import { fetchHeaders } from '../../src/undici/bridge.js';
import { undiciHeaders } from '../../src/undici/deliver.js';
import { headersRecord, pathOf, urlOf } from '../../src/undici/request.js';

describe('headersRecord', () => {
  it('no headers: an empty object', () => {
    expect(headersRecord(null)).toEqual({});
    expect(headersRecord(undefined)).toEqual({});
  });

  it('an object: values as strings, a list joined with ", ", an undefined one left out', () => {
    expect(headersRecord({ 'X-A': '1', 'x-b': ['2', '3'], 'x-n': 5 as unknown as string, 'x-u': undefined })).toEqual({
      'X-A': '1',
      'x-b': '2, 3',
      'x-n': '5',
    });
  });

  it('a flat list and an iterable of pairs: a repeated name keeps every value, in order', () => {
    expect(headersRecord(['x-a', '1', 'x-b', '2', 'x-a', '3'])).toEqual({ 'x-a': '1, 3', 'x-b': '2' });
    expect(
      headersRecord(
        new Map<string, string | string[] | undefined>([
          ['x-a', ['1', '2']],
          ['x-u', undefined],
        ]),
      ),
    ).toEqual({ 'x-a': '1, 2' });
  });
});

describe('urlOf and pathOf', () => {
  it('the origin (a string or a URL, its path dropped) and the path as written', () => {
    expect(urlOf({ origin: 'http://127.0.0.1:8080', path: '/a/../b?x=1' })).toBe('http://127.0.0.1:8080/a/../b?x=1');
    expect(urlOf({ origin: new URL('http://127.0.0.1:8080/ignored'), path: '/p' })).toBe('http://127.0.0.1:8080/p');
  });

  it('no origin (a Client’s request): any origin that parses, the path kept', () => {
    expect(urlOf({ path: '/p?q' })).toBe('http://localhost/p?q');
    expect(new URL(urlOf({ path: '/p?q' })).search).toBe('?q');
  });

  it('the caller’s path unless retryFetch sent another URL; then that URL’s path and query', () => {
    expect(pathOf('http://h/a/../b', 'http://h/a/../b', '/a/../b')).toBe('/a/../b');
    expect(pathOf(new URL('http://h/o?alt=media&generation=7'), 'http://h/o?alt=media', '/o?alt=media')).toBe('/o?alt=media&generation=7');
  });
});

describe('response headers', () => {
  it('undici’s to fetch’s: a list becomes repeated headers', () => {
    const headers = fetchHeaders({ 'set-cookie': ['a=1', 'b=2'], 'x-a': 'v', link: ['<a>', '<b>'] });
    expect(headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(headers.get('x-a')).toBe('v');
    expect(headers.get('link')).toBe('<a>, <b>');
  });

  it('fetch’s to undici’s: lower-case names, set-cookie a list only when there is one', () => {
    expect(
      undiciHeaders(
        new Headers([
          ['X-A', 'v'],
          ['set-cookie', 'a=1'],
          ['set-cookie', 'b=2'],
        ]),
      ),
    ).toEqual({
      'x-a': 'v',
      'set-cookie': ['a=1', 'b=2'],
    });
    expect(undiciHeaders(new Headers({ 'x-a': 'v' }))).toEqual({ 'x-a': 'v' });
  });
});
