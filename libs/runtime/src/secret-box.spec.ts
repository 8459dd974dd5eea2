import { SecretBox } from './secret-box.js';

describe('SecretBox', () => {
  const box = new SecretBox('a development key of some length');

  it('opens what it sealed, and never shows the secret in the sealed form', () => {
    const sealed = box.seal('whsec_very-secret');
    expect(sealed).not.toContain('very-secret');
    expect(box.open(sealed)).toBe('whsec_very-secret');
  });

  it('seals the same secret differently each time', () => {
    expect(box.seal('x')).not.toBe(box.seal('x'));
  });

  it('refuses a sealed secret that was tampered with or sealed under another key', () => {
    const sealed = box.seal('secret');
    const parts = sealed.split('.');
    parts[3] = Buffer.from('other').toString('base64url');
    expect(() => box.open(parts.join('.'))).toThrow();
    expect(() => new SecretBox('another key entirely!!').open(sealed)).toThrow();
    expect(() => box.open('plain text')).toThrow(/not a sealed secret/);
  });
});
