import { type FormEvent, useState } from 'react';
import { postJson } from './api.ts';

/** The master key or an admin key, given once: the gateway answers with a session cookie. */
export function Login({ onLoggedIn }: { onLoggedIn: () => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

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
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}
