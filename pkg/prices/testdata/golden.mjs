// Prices testdata/cases.json with @pydantic/genai-prices itself; the output
// (testdata/golden.json) is what the Go package must answer.
// Run by scripts/update-prices.sh inside the npm project it installs.
import { readFileSync } from 'node:fs';
import { calcPrice } from '@pydantic/genai-prices';

const cases = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const out = cases.map((c) => {
  const opts = { timestamp: new Date(c.time ?? '2026-06-01T12:00:00Z') };
  if (c.provider) opts.providerId = c.provider;
  if (c.api_url) opts.providerApiUrl = c.api_url;
  let r;
  try {
    r = calcPrice(c.usage, c.model, opts);
  } catch (e) {
    return { name: c.name, error: String(e.message ?? e) };
  }
  if (!r) return { name: c.name, price: null };
  return {
    name: c.name,
    provider: r.provider.id,
    model: r.model.id,
    input_price: r.input_price,
    output_price: r.output_price,
    total_price: r.total_price,
  };
});
process.stdout.write(JSON.stringify(out, null, 1) + '\n');
