import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { Upload, PreviewView } from "./Upload";
import { errorPlace, linesAround, parseCSVPreview, parseJSONPreview } from "./csv";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const CSV = 'country,capital\nFrance,Paris\n"Spain, Kingdom of",Madrid\nItaly,Rome,extra\nPeru,Lima\n';

describe("CSV preview", () => {
  it("parses quoted cells and shows the first rows", () => {
    const p = parseCSVPreview(CSV);
    expect(p.columns).toEqual(["country", "capital"]);
    expect(p.rows[1]).toEqual({ country: "Spain, Kingdom of", capital: "Madrid" });
    expect(p.problem).toBe("row 3: 3 cells, but the header has 2 columns");
  });

  it("names the line of a quote never closed", () => {
    expect(parseCSVPreview('a,b\n1,2\n"3,4\n5,6\n').problem).toBe("line 3: a quoted cell is never closed");
  });

  it("keeps JSON objects and names a non-object item", () => {
    const p = parseJSONPreview('[{"q":"1"},{"q":"2","a":"x"},3]');
    expect(p.columns).toEqual(["q", "a"]);
    expect(p.rows).toHaveLength(2);
    expect(p.problem).toBe("item 2 is not an object");
  });

  it("reads the server's place of an error", () => {
    expect(errorPlace("line 4: 3 cells, but the header has 2 columns")).toMatchObject({ line: 4 });
    expect(errorPlace('line 7, column "q": invalid UTF-8')).toMatchObject({ line: 7, column: "q" });
    expect(errorPlace("item 12: __tags__ must be a JSON object or null")).toMatchObject({ item: 12 });
    expect(errorPlace("file exceeds the limit of 100000 rows")).toEqual({ message: "file exceeds the limit of 100000 rows" });
    expect(linesAround(CSV, 4, 1, 1).map((l) => l.n)).toEqual([3, 4, 5]);
  });

  it("shows the error at its line, far past the preview too", () => {
    const big = "q,a\n" + Array.from({ length: 500 }, (_, i) => (i === 449 ? `x${i},y,z` : `x${i},y`)).join("\n");
    render(<PreviewView preview={parseCSVPreview(big)} text={big} error={errorPlace("line 451: 3 cells, but the header has 2 columns")} />);
    const lines = screen.getByTestId("error-lines");
    const bad = lines.querySelector('[data-line="451"]') as HTMLElement;
    expect(bad).toHaveTextContent("x449,y,z");
    expect(bad.style.fontWeight).toBe("700");
    expect(lines.querySelector('[data-line="450"]')).toHaveTextContent("x448,y");
  });
});

describe("upload", () => {
  it("previews the file, sends it, and shows the server's refusal at its line", async () => {
    const calls: { url: string; body: FormData }[] = [];
    vi.stubGlobal(
      "fetch",
      vi.fn(async (url: string, init: RequestInit) => {
        calls.push({ url, body: init.body as FormData });
        return new Response(JSON.stringify({ detail: "line 4: 3 cells, but the header has 2 columns" }), {
          status: 400,
          headers: { "Content-Type": "application/json" },
        });
      }),
    );
    render(<Upload />);
    await userEvent.upload(screen.getByTestId("upload-file"), new File([CSV], "capitals.csv", { type: "text/csv" }));
    expect(await screen.findByText("Spain, Kingdom of")).toBeInTheDocument();
    expect(screen.getByLabelText("testset name")).toHaveValue("capitals");
    await userEvent.click(screen.getByTestId("upload-send"));
    await waitFor(() => expect(screen.getByRole("alert")).toHaveTextContent("line 4: 3 cells"));
    expect(calls[0].url).toMatch(/^\/api\/simple\/testsets\/upload/);
    expect(calls[0].body.get("file_type")).toBe("csv");
    expect(calls[0].body.get("testset_name")).toBe("capitals");
    expect(screen.getByTestId("error-lines").querySelector('[data-line="4"]')).toHaveTextContent("Italy,Rome,extra");
  }, 30_000);
});
