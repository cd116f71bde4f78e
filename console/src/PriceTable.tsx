import { formatUsd, type PriceUsed } from './api.ts';
import { DataTable } from './DataTable.tsx';

/** The price fields by what they charge, in the registry's and the config's names. */
const FIELDS: Record<string, string> = {
  input_mtok: 'Input, per million tokens',
  output_mtok: 'Output, per million tokens',
  cache_read_mtok: 'Cached input, per million tokens',
  cache_write_mtok: 'Cache writes, per million tokens',
  input_audio_mtok: 'Audio input, per million tokens',
  cache_audio_read_mtok: 'Cached audio input, per million tokens',
  output_audio_mtok: 'Audio output, per million tokens',
  requests_kcount: 'Per thousand requests',
};

/** A registry price may be tiered by prompt size: a base and a price from each threshold on. */
interface Tiered {
  base: number;
  tiers: { start: number; price: number }[];
}
const isTiered = (v: unknown): v is Tiered =>
  typeof v === 'object' && v !== null && typeof (v as Tiered).base === 'number' && Array.isArray((v as Tiered).tiers);

/** A price as it was set: "$0.075", not rounded like a cost. */
const usd = (n: number): string => `$${n}`;

function priceText(v: unknown): string {
  if (typeof v === 'number') return usd(v);
  if (isTiered(v)) {
    return [usd(v.base), ...v.tiers.map((t) => `${usd(t.price)} from ${t.start.toLocaleString()} tokens`)].join('; ');
  }
  return JSON.stringify(v);
}

/** Where the price came from, in words. */
function sourceText(p: PriceUsed): string {
  if (p.source === 'free') return 'free (this provider costs nothing)';
  if (p.source === 'unknown') return 'none known: add one under pricing in the config';
  return p.source === 'config' ? 'the config' : `the registry${p.registry_model ? ` (${p.registry_model})` : ''}`;
}

/** The price a request was costed at: where it came from, then one row per part it charges for. */
export function PriceTable({ price }: { price: PriceUsed }) {
  const rows = Object.entries(price.price ?? {}).filter(([, v]) => v !== null && v !== undefined && typeof v !== 'string');
  return (
    <section>
      <h2>Price used</h2>
      <p>
        From {sourceText(price)}
        {Math.abs(price.cost_usd - price.recorded_cost_usd) > 1e-12 &&
          `; today's price gives ${formatUsd(price.cost_usd)}: the price changed since`}
        .
      </p>
      {rows.length > 0 && (
        <DataTable label="Price used" className="price" columns={['Charged for', 'USD']}>
          {rows.map(([field, value]) => (
            <tr key={field}>
              <th scope="row">{FIELDS[field] ?? field.replaceAll('_', ' ')}</th>
              <td className="wrap">{priceText(value)}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}
