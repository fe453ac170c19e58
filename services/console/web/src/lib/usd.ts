/** usd renders an amount in dollars: cents from a dime up, else three
 * significant digits (a small run costs fractions of a cent). */
export function usd(v: number): string {
  return v >= 0.1 || v === 0 ? `$${v.toFixed(2)}` : `$${Number(v.toPrecision(3))}`;
}
