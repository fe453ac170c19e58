// A word diff of two short texts (an application's outputs side by side):
// the longest common subsequence of their words and spaces. Long texts
// (over MAX tokens each) are shown as one replacement rather than paying
// for a quadratic table.
export type Piece = { text: string; op: "same" | "del" | "ins" };

const MAX = 600;

export function wordDiff(a: string, b: string): Piece[] {
  if (a === b) return a ? [{ text: a, op: "same" }] : [];
  const x = a.split(/(\s+)/).filter(Boolean);
  const y = b.split(/(\s+)/).filter(Boolean);
  if (x.length > MAX || y.length > MAX) {
    return [...(a ? [{ text: a, op: "del" as const }] : []), ...(b ? [{ text: b, op: "ins" as const }] : [])];
  }
  // lcs[i][j]: the common length of x[i:] and y[j:]
  const lcs: Uint16Array[] = Array.from({ length: x.length + 1 }, () => new Uint16Array(y.length + 1));
  for (let i = x.length - 1; i >= 0; i--)
    for (let j = y.length - 1; j >= 0; j--) lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const out: Piece[] = [];
  const push = (text: string, op: Piece["op"]) => {
    const last = out[out.length - 1];
    if (last && last.op === op) last.text += text;
    else out.push({ text, op });
  };
  let i = 0;
  let j = 0;
  while (i < x.length && j < y.length) {
    if (x[i] === y[j]) {
      push(x[i], "same");
      i++;
      j++;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) push(x[i++], "del");
    else push(y[j++], "ins");
  }
  while (i < x.length) push(x[i++], "del");
  while (j < y.length) push(y[j++], "ins");
  return out;
}
