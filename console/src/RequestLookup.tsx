import { type FormEvent, useState } from 'react';
import { requestHref } from './route.ts';

/**
 * The X-Request-ID a user reports, straight to its request's page, from every page. Pasted
 * header lines (`x-request-id: …`) and surrounding spaces are taken off.
 */
export function RequestLookup() {
  const [id, setId] = useState('');
  const open = (e: FormEvent) => {
    e.preventDefault();
    const wanted = id.trim().replace(/^x-request-id:\s*/i, '');
    if (!wanted) return;
    location.hash = requestHref(wanted);
    setId('');
  };
  return (
    <form className="lookup" onSubmit={open} role="search" aria-label="Open a request">
      <label htmlFor="request-lookup">X-Request-ID</label>
      <input id="request-lookup" value={id} onChange={(e) => setId(e.target.value)} spellCheck={false} />
      <button type="submit">Open</button>
    </form>
  );
}
