/** usd renders an amount in dollars: cents from a dime up, else three
 * significant digits written out (a small run costs fractions of a cent:
 * "$0.0000015", never "1.5e-6"); a negative amount (a delta) keeps its sign. */
export function usd(v: number): string {
  const a = Math.abs(v);
  const sign = v < 0 ? "-" : "";
  if (a >= 0.1 || a === 0) return `${sign}$${a.toFixed(2)}`;
  const digits = Math.min(12, 2 - Math.floor(Math.log10(a)));
  return `${sign}$${a.toFixed(digits).replace(/(\.\d*?[1-9])0+$/, "$1")}`;
}
