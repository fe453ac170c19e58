// Upload of a CSV or JSON file: a preview of its first rows, then the
// server's answer; a refusal is shown at its line (CSV) or item (JSON).
import { useState } from "react";
import { upload, type FileType, type UploadResult } from "../../api/testsets";
import { errorMessage } from "../../api/call";
import { errorPlace, linesAround, parseCSVPreview, parseJSONPreview, type ErrorPlace, type Preview } from "./csv";

export interface UploadProps {
  testsetId?: string;
  onDone?: (r: UploadResult) => void;
}

export function Upload({ testsetId, onDone }: UploadProps) {
  const [file, setFile] = useState<File | null>(null);
  const [text, setText] = useState("");
  const [type, setType] = useState<FileType>("csv");
  const [name, setName] = useState("");
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<ErrorPlace | null>(null);

  const choose = async (f: File | undefined) => {
    setErr(null);
    if (!f) return;
    const t = /\.json$/i.test(f.name) ? "json" : "csv";
    setFile(f);
    setType(t);
    setName((n) => n || f.name.replace(/\.(csv|json)$/i, ""));
    setText(await f.text());
  };

  const send = async () => {
    if (!file) return;
    setBusy(true);
    setErr(null);
    try {
      const r = await upload(file, type, { testsetId, name: name || undefined });
      onDone?.(r);
    } catch (e) {
      setErr(errorPlace(errorMessage(e)));
    } finally {
      setBusy(false);
    }
  };

  const preview = text ? (type === "json" ? parseJSONPreview(text) : parseCSVPreview(text)) : null;
  return (
    <section aria-label="upload">
      <label>
        File (CSV or JSON){" "}
        <input type="file" accept=".csv,.json,text/csv,application/json" data-testid="upload-file" onChange={(e) => choose(e.currentTarget.files?.[0])} />
      </label>{" "}
      <select value={type} onChange={(e) => setType(e.currentTarget.value as FileType)} aria-label="file type">
        <option value="csv">CSV</option>
        <option value="json">JSON</option>
      </select>{" "}
      {!testsetId && <input placeholder="testset name" value={name} onChange={(e) => setName(e.currentTarget.value)} aria-label="testset name" />}{" "}
      <button disabled={!file || busy} onClick={send} data-testid="upload-send">
        {busy ? "Uploading…" : "Upload"}
      </button>
      {preview && <PreviewView preview={preview} text={text} error={err} />}
      {!preview && err && <p role="alert">{err.message}</p>}
    </section>
  );
}

export function PreviewView({ preview, text, error }: { preview: Preview; text: string; error: ErrorPlace | null }) {
  return (
    <div data-testid="upload-preview">
      {error && (
        <div role="alert" style={{ color: "#b00", margin: "8px 0" }}>
          <strong>The server refused the file:</strong> {error.message}
          {error.line !== undefined && (
            <pre data-testid="error-lines" style={{ background: "#fff4f4", padding: 6 }}>
              {linesAround(text, error.line).map((l) => (
                <div key={l.n} data-line={l.n} style={l.n === error.line ? { background: "#fcc", fontWeight: 700 } : undefined}>
                  {String(l.n).padStart(6)} │ {l.text}
                </div>
              ))}
            </pre>
          )}
          {error.item !== undefined && <p data-testid="error-item">Item {error.item} of the array (0-based).</p>}
        </div>
      )}
      {preview.problem && !error && <p style={{ color: "#a60" }}>Preview: {preview.problem}</p>}
      <table className="preview">
        <thead>
          <tr>
            {preview.columns.map((c) => (
              <th key={c}>{c}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {preview.rows.map((r, i) => (
            <tr key={i}>
              {preview.columns.map((c) => (
                <td key={c}>{typeof r[c] === "string" ? (r[c] as string) : JSON.stringify(r[c] ?? null)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      <small>
        Preview of the first {preview.rows.length} rows; the server reads the whole file.
      </small>
    </div>
  );
}
