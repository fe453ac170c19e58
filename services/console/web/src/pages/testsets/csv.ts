// The upload preview: the first rows of a CSV or JSON file, parsed in the
// browser only to show them (the server parses the whole file again and is
// the authority), and the place of the server's error in the file.

export interface Preview {
  columns: string[];
  rows: Record<string, unknown>[];
  /** lines[i] is the file's line i+1, kept for the ones shown. */
  lines: string[];
  /** a problem the preview found itself (the server may still accept). */
  problem?: string;
}

/** ErrorPlace is where a server error points: CSV errors name a line
 * ("line 3: …", "line 3, column \"q\": …"), JSON errors an item ("item 2: …"). */
export interface ErrorPlace {
  line?: number;
  item?: number;
  column?: string;
  message: string;
}

export function errorPlace(message: string): ErrorPlace {
  const m = /^line (\d+)(?:, column "((?:[^"\\]|\\.)*)")?/.exec(message);
  if (m) return { line: Number(m[1]), column: m[2], message };
  const i = /^item (\d+)/.exec(message);
  if (i) return { item: Number(i[1]), message };
  return { message };
}

/** parseCSVPreview reads up to maxRows records of the CSV text with
 * Python-csv-like quoting (quotes open a cell only at its start; "" is a
 * quote inside a quoted cell). */
export function parseCSVPreview(text: string, maxRows = 20): Preview {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const records: string[][] = [];
  let rec: string[] = [];
  let cell = "";
  let inQuotes = false;
  let atStart = true;
  let i = 0;
  let problem: string | undefined;
  let line = 1;
  let quoteLine = 0;
  const endRecord = () => {
    rec.push(cell);
    if (!(rec.length === 1 && rec[0] === "")) records.push(rec);
    rec = [];
    cell = "";
    atStart = true;
  };
  for (; i < text.length && records.length <= maxRows; i++) {
    const c = text[i];
    if (inQuotes) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          cell += '"';
          i++;
        } else inQuotes = false;
      } else {
        if (c === "\n") line++;
        cell += c;
      }
      continue;
    }
    if (c === '"' && atStart) {
      inQuotes = true;
      quoteLine = line;
      atStart = false;
    } else if (c === ",") {
      rec.push(cell);
      cell = "";
      atStart = true;
    } else if (c === "\n") {
      line++;
      endRecord();
    } else if (c === "\r" && text[i + 1] === "\n") {
      // CRLF: the \n ends the record
    } else {
      cell += c;
      atStart = false;
    }
  }
  if (i >= text.length) {
    if (inQuotes) problem = `line ${quoteLine}: a quoted cell is never closed`;
    else if (cell !== "" || rec.length > 0) endRecord();
  }
  const [header = [], ...body] = records;
  const rows = body.slice(0, maxRows).map((r) => {
    const o: Record<string, unknown> = {};
    header.forEach((h, k) => (o[h] = k < r.length ? r[k] : null));
    return o;
  });
  if (!problem) {
    const bad = body.slice(0, maxRows).findIndex((r) => r.length !== header.length);
    if (bad >= 0) problem = `row ${bad + 1}: ${body[bad].length} cells, but the header has ${header.length} columns`;
  }
  return { columns: header, rows, lines: firstLines(text, 200), problem };
}

/** parseJSONPreview reads the JSON array and keeps its first objects. */
export function parseJSONPreview(text: string, maxRows = 20): Preview {
  const lines = firstLines(text, 200);
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return { columns: [], rows: [], lines, problem: (e as Error).message };
  }
  if (!Array.isArray(v)) return { columns: [], rows: [], lines, problem: "the top-level value must be an array of objects" };
  const rows: Record<string, unknown>[] = [];
  const cols = new Set<string>();
  let problem: string | undefined;
  v.forEach((item, k) => {
    if (item === null || typeof item !== "object" || Array.isArray(item)) {
      problem ??= `item ${k} is not an object`;
      return;
    }
    if (rows.length < maxRows) {
      rows.push(item as Record<string, unknown>);
      Object.keys(item).forEach((c) => cols.add(c));
    }
  });
  return { columns: [...cols], rows, lines, problem };
}

function firstLines(text: string, n: number): string[] {
  const out: string[] = [];
  let start = 0;
  while (out.length < n && start <= text.length) {
    const nl = text.indexOf("\n", start);
    if (nl < 0) {
      if (start < text.length) out.push(text.slice(start));
      break;
    }
    out.push(text.slice(start, nl).replace(/\r$/, ""));
    start = nl + 1;
  }
  return out;
}

/** linesAround returns the lines [line-before, line+after] of text (1-based)
 * with their numbers, for showing a server error in context even when it
 * is far past the preview. */
export function linesAround(text: string, line: number, before = 2, after = 2): { n: number; text: string }[] {
  const from = Math.max(1, line - before);
  const to = line + after;
  const out: { n: number; text: string }[] = [];
  let n = 1;
  let start = 0;
  while (n <= to && start <= text.length) {
    const nl = text.indexOf("\n", start);
    const end = nl < 0 ? text.length : nl;
    if (n >= from) out.push({ n, text: text.slice(start, end).replace(/\r$/, "") });
    if (nl < 0) break;
    start = nl + 1;
    n++;
  }
  return out;
}
