import { type FormEvent, useEffect, useState } from 'react';
import { api, postJson } from './api.ts';

/**
 * The master key or an admin key, given once: the gateway answers with a session cookie. With
 * auth.sso configured, "Sign in with SSO" goes to the identity provider instead.
 */
export function Login({ onLoggedIn }: { onLoggedIn: () => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [sso, setSso] = useState(false);
  useEffect(() => {
    api<{ enabled: boolean }>('/console/api/sso')
      .then((s) => setSso(s.enabled))
      .catch(() => setSso(false));
  }, []);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await postJson('/console/api/login', { key });
      setKey('');
      onLoggedIn();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="login">
      <h1>sluice console</h1>
      <form onSubmit={(e) => void submit(e)}>
        <label htmlFor="key">Master key or admin key</label>
        <input
          id="key"
          name="key"
          type="password"
          autoComplete="current-password"
          autoFocus
          value={key}
          onChange={(e) => setKey(e.target.value)}
        />
        <button type="submit" disabled={busy}>
          Log in
        </button>
        {sso && (
          <a className="sso" href="/console/api/sso/login">
            Sign in with SSO
          </a>
        )}
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}
