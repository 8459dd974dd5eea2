import { execFileSync } from 'node:child_process';
import { runInNewContext } from 'node:vm';
import { curlSnippet, javascriptLiteral, javascriptSnippet, pythonLiteral, pythonSnippet, shellQuote } from './request-snippets.js';

/** Bodies built to break naive quoting in one of the three languages. */
const NASTY: Record<string, unknown> = {
  quote: `it's "quoted" and 'single'`,
  shell: '$HOME `id` $(id) \\ ! * ; | & > < #',
  unicode: 'café ☕ 𝄞 日本語 \u2028 \u2029',
  control: 'tab\there\nnew line\r\u0000\u001b',
  backslashes: 'C:\\path\\to\\n',
  triple: `''' """ \\'''`,
  numbers: [0, -1, 1.5, 1e21, -0.000001],
  flags: { yes: true, no: false, nothing: null },
  empty: { object: {}, array: [], text: '' },
  'key with "quotes" and \'apostrophes\'': 1,
};

function hasPython(): boolean {
  try {
    execFileSync('python3', ['--version']);
    return true;
  } catch {
    return false;
  }
}

describe('shellQuote', () => {
  it('passes any text to a POSIX shell unchanged', () => {
    for (const text of [`it's`, `'''`, '$HOME `id` $(id)', 'a\nb', 'ünï ☕', '', `\\'`]) {
      expect(execFileSync('sh', ['-c', `printf %s ${shellQuote(text)}`], { encoding: 'utf8' })).toBe(text);
    }
  });
});

describe('javascriptLiteral', () => {
  it('evaluates to the same JSON value', () => {
    expect(runInNewContext(`(${javascriptLiteral(NASTY)})`)).toEqual(NASTY);
  });

  it('keeps a __proto__ key an own property', () => {
    const body = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const value = runInNewContext(`(${javascriptLiteral(body)})`) as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(value)).not.toHaveProperty('polluted');
  });
});

(hasPython() ? describe : describe.skip)('pythonLiteral', () => {
  it('evaluates, in Python, to the same JSON value', () => {
    const printed = execFileSync('python3', ['-c', `import json, sys\nvalue = ${pythonLiteral(NASTY)}\nsys.stdout.write(json.dumps(value))`], { encoding: 'utf8' });
    expect(JSON.parse(printed)).toEqual(NASTY);
  });

  it('writes true, false and null as Python spells them', () => {
    expect(pythonLiteral({ a: true, b: false, c: null })).toBe('{\n    "a": True,\n    "b": False,\n    "c": None,\n}');
  });
});

describe('snippets', () => {
  const request = { url: `https://api.example.com/v1/orgs/o/flows/p/trigger?x='y'`, body: NASTY };

  it('curl sends the body and URL exactly, the token from RUNLINE_TOKEN and a fresh idempotency key', () => {
    // A stand-in `curl` on PATH prints what it was given, one argument per line, NUL-separated.
    const bin = execFileSync('mktemp', ['-d'], { encoding: 'utf8' }).trim();
    execFileSync('sh', ['-c', `printf '#!/bin/sh\\nfor a in "$@"; do printf "%%s\\\\0" "$a"; done\\n' > ${bin}/curl && chmod +x ${bin}/curl`]);
    const run = () =>
      execFileSync('bash', ['-c', curlSnippet(request)], { encoding: 'utf8', env: { PATH: `${bin}:${process.env.PATH}`, RUNLINE_TOKEN: 'rl_ext_token-from-env' } }).split('\0');
    const args = run();
    expect(args[args.indexOf('-X') + 2]).toBe(request.url);
    expect(JSON.parse(args[args.indexOf('--data-raw') + 1]!)).toEqual(NASTY);
    expect(args).toContain('Authorization: Bearer rl_ext_token-from-env');
    const key = args.find((arg) => arg.startsWith('x-idempotency-key: '))!;
    expect(key).toMatch(/^x-idempotency-key: [0-9a-f]{32}$/);
    expect(run().find((arg) => arg.startsWith('x-idempotency-key: '))).not.toBe(key);
  });

  it('no snippet holds a token, only the variable', () => {
    for (const snippet of [curlSnippet(request), javascriptSnippet(request), pythonSnippet(request)]) {
      expect(snippet).toContain('RUNLINE_TOKEN');
      expect(snippet).not.toMatch(/rl_ext_/);
    }
    expect(javascriptSnippet(request)).toContain('process.env.RUNLINE_TOKEN');
    expect(pythonSnippet(request)).toContain('os.environ["RUNLINE_TOKEN"]');
  });
});
