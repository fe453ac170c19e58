package cmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/assayhq/assay/cli/internal/api"
	"github.com/assayhq/assay/cli/internal/output"
	"github.com/assayhq/assay/cli/internal/progress"
)

// barFrom is the file size from which an upload shows a progress bar (on
// a terminal): below it the upload is over before a bar means anything.
const barFrom = 1 << 20

func (a *app) testsetsCmd() *cobra.Command {
	ts := group("testsets", "Push, pull and compare testsets", "testset", "ts")
	ts.AddCommand(a.testsetsList(), a.testsetsPush(), a.testsetsPull(), a.testsetsDiff())
	return ts
}

func (a *app) testsetsList() *cobra.Command {
	return &cobra.Command{
		Use: "list", Short: "List the project's testsets", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cl, err := a.client()
			if err != nil {
				return err
			}
			var out struct {
				Testsets []obj `json:"testsets"`
			}
			if err := cl.JSON(c.Context(), "POST", "/api/simple/testsets/query", obj{}, &out); err != nil {
				return err
			}
			t := output.Table{Header: []string{"id", "slug", "name", "revision_id", "rows"}, Raw: out.Testsets}
			for _, r := range out.Testsets {
				ids, _ := sub(r, "data")["testcase_ids"].([]any)
				t.Rows = append(t.Rows, []string{str(r, "id"), str(r, "slug"), str(r, "name"), str(r, "revision_id"), fmt.Sprint(len(ids))})
			}
			return a.write(t)
		},
	}
}

func (a *app) testsetsPush() *cobra.Command {
	var slug, name, format string
	c := &cobra.Command{
		Use:   "push FILE",
		Short: "Upload a CSV, JSON or JSONL file as a new testset, or as a new revision of an existing one",
		Long: `Uploads FILE (CSV, a JSON array of objects, or JSONL: one object a line) to the
testset named by --testset (a slug or id; default: the file's name). When the
testset exists the file becomes its next revision (POST
/api/simple/testsets/{id}/upload); otherwise the testset is created with that
slug (POST /api/simple/testsets/upload). The file is streamed; on a terminal,
files over 1 MiB show a progress bar.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			cl, err := a.client()
			if err != nil {
				return err
			}
			file := args[0]
			f, err := os.Open(file)
			if err != nil {
				return api.Errorf(api.ExitError, "%v", err)
			}
			defer f.Close()
			st, err := f.Stat()
			if err != nil {
				return err
			}
			if format == "" {
				format = strings.TrimPrefix(strings.ToLower(filepath.Ext(file)), ".")
			}
			if format == "ndjson" {
				format = "jsonl"
			}
			if format != "csv" && format != "json" && format != "jsonl" {
				return usagef("cannot tell the format of %s: use --format csv, json or jsonl", file)
			}
			if slug == "" {
				slug = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
			}
			existing, err := findSimple(c.Context(), cl, "testset", slug)
			if err != nil {
				return err
			}
			fields := map[string]string{}
			path := "/api/simple/testsets/upload"
			if existing != nil {
				path = "/api/simple/testsets/" + pathEscape(str(existing, "id")) + "/upload"
				if name != "" {
					fields["testset_name"] = name
				}
			} else {
				if isUUID(slug) {
					return api.NotFound("no testset %s in this project", slug)
				}
				fields["testset_slug"] = slug
				fields["testset_name"] = first(name, slug)
			}
			var src io.Reader = f
			var bar *progress.Bar
			if st.Size() >= barFrom && progress.IsTerminal(a.stderr) {
				bar = progress.New(a.stderr, "uploading", time.Second)
				src = &progress.Reader{R: f, Bar: bar, Total: st.Size()}
			}
			fileType := format
			if format == "jsonl" {
				// The registry reads CSV and JSON arrays: JSONL is turned
				// into an array on the fly, still streamed.
				src, fileType = jsonlToArray(src), "json"
			}
			fields["file_type"] = fileType
			var out struct {
				Count   int `json:"count"`
				Testset obj `json:"testset"`
			}
			err = upload(c.Context(), cl, path, fields, filepath.Base(file), src, &out)
			if bar != nil {
				bar.Done(fmt.Sprintf("%s sent", progress.Bytes(st.Size())))
			}
			if err != nil {
				return err
			}
			r := out.Testset
			ids, _ := sub(r, "data")["testcase_ids"].([]any)
			action := "created"
			if existing != nil {
				action = "committed"
				if str(existing, "revision_id") == str(r, "revision_id") {
					action = "unchanged"
				}
			}
			raw := obj{"action": action, "id": str(r, "id"), "slug": str(r, "slug"), "revision_id": str(r, "revision_id"), "rows": len(ids)}
			return a.write(output.Table{Header: []string{"action", "id", "slug", "revision_id", "rows"},
				Rows: [][]string{{action, str(r, "id"), str(r, "slug"), str(r, "revision_id"), fmt.Sprint(len(ids))}}, Raw: raw})
		},
	}
	c.Flags().StringVarP(&slug, "testset", "t", "", "testset slug or id (default: the file name without extension)")
	c.Flags().StringVar(&name, "name", "", "testset name (on create; default: the slug)")
	c.Flags().StringVar(&format, "format", "", "csv, json or jsonl (default: from the extension)")
	return c
}

// upload streams a multipart form (fields first, as the registry reads
// them before the file) without holding the file in memory.
func upload(ctx context.Context, cl *api.Client, path string, fields map[string]string, name string, file io.Reader, out any) error {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		keys := make([]string, 0, len(fields))
		for k := range fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := mw.WriteField(k, fields[k]); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		fw, err := mw.CreateFormFile("file", name)
		if err == nil {
			_, err = io.Copy(fw, file)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	res, err := cl.Send(ctx, "POST", path, pr, mw.FormDataContentType())
	pr.CloseWithError(io.ErrClosedPipe)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	return json.NewDecoder(res.Body).Decode(out)
}

// jsonlToArray reads JSON Lines and yields one JSON array; blank lines are
// skipped. A line that is not JSON is an error naming its number (the
// server's message would name an array item instead).
func jsonlToArray(r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		bw := bufio.NewWriter(pw)
		bw.WriteString("[")
		n, line := 0, 0
		for sc.Scan() {
			line++
			b := bytes.TrimSpace(sc.Bytes())
			if len(b) == 0 {
				continue
			}
			if !json.Valid(b) {
				pw.CloseWithError(api.Errorf(api.ExitError, "line %d of the JSONL file is not JSON", line))
				return
			}
			if n > 0 {
				bw.WriteString(",")
			}
			bw.Write(b)
			n++
		}
		if err := sc.Err(); err != nil {
			pw.CloseWithError(err)
			return
		}
		bw.WriteString("]")
		pw.CloseWithError(bw.Flush())
	}()
	return pr
}

func (a *app) testsetsPull() *cobra.Command {
	var file, revision string
	var withIDs bool
	c := &cobra.Command{
		Use:   "pull TESTSET",
		Short: "Download a testset's rows (latest revision, or --revision) as a table, JSON or CSV",
		Long: `Prints the rows of TESTSET (slug or id) in the --output format, or writes them to
--file (format from its extension: .csv or .json). --revision picks a revision
(id, or the version number of the testset's default variant). The server's
__dedup_id__ and __id__ columns are left out unless --with-ids: keep them in a
file you will edit and push again, so its rows keep their identity in diffs.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			cl, err := a.client()
			if err != nil {
				return err
			}
			ref := args[0]
			if revision != "" {
				if isUUID(revision) {
					ref = revision
				} else {
					ref = args[0] + "@" + revision
				}
			}
			rev, err := retrieveRevision(c.Context(), cl, "testset", ref)
			if err != nil {
				return err
			}
			format := a.out
			if file != "" {
				format = strings.TrimPrefix(strings.ToLower(filepath.Ext(file)), ".")
				if format != "csv" && format != "json" {
					return usagef("--file must end in .csv or .json")
				}
			}
			ft := format
			if ft == "table" {
				ft = "csv"
			}
			path := "/api/testsets/revisions/" + pathEscape(str(rev, "id")) + "/download?file_type=" + ft
			if withIDs {
				path += "&include_ids=true"
			}
			res, err := cl.Send(c.Context(), "POST", path, nil, "")
			if err != nil {
				return err
			}
			defer res.Body.Close()
			if file != "" {
				out, err := os.Create(file)
				if err != nil {
					return err
				}
				if _, err := io.Copy(out, res.Body); err != nil {
					out.Close()
					return err
				}
				if err := out.Close(); err != nil {
					return err
				}
				fmt.Fprintf(a.stderr, "wrote revision %s (version %s) to %s\n", str(rev, "id"), versionOf(rev), file)
				return nil
			}
			if format != "table" {
				_, err = io.Copy(a.stdout, res.Body)
				return err
			}
			recs, err := csv.NewReader(res.Body).ReadAll()
			if err != nil {
				return err
			}
			if len(recs) == 0 {
				return a.write(output.Table{})
			}
			return a.write(output.Table{Header: recs[0], Rows: recs[1:]})
		},
	}
	c.Flags().StringVarP(&file, "file", "f", "", "write to this file (.csv or .json) instead of standard output")
	c.Flags().StringVarP(&revision, "revision", "r", "", "revision id or version (default: the latest)")
	c.Flags().BoolVar(&withIDs, "with-ids", false, "include the server's __dedup_id__ and __id__ columns")
	return c
}

func versionOf(rev obj) string {
	switch v := rev["version"].(type) {
	case string:
		return v
	case float64:
		return output.Num(v)
	}
	return ""
}

func (a *app) testsetsDiff() *cobra.Command {
	c := &cobra.Command{
		Use:   "diff REV REV",
		Short: "Show what changed between two testset revisions: columns, and rows added, removed or changed",
		Long: `Each REV is a revision id, a testset slug or id (its latest revision), or
SLUG@VERSION. Rows are matched by identity (the dedup id the server gives each
row, kept across edits), so an edited row is one line naming the row (its
position and first column value) and the cells that changed, and a new column
is reported once. Exits 0 whether or not they differ; --output json prints
{columns_added, columns_removed, added, removed, changed, unchanged}.`,
		Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			cl, err := a.client()
			if err != nil {
				return err
			}
			var rows [2][]tsRow
			var names [2]string
			for i, ref := range args {
				rev, err := retrieveRevision(c.Context(), cl, "testset", ref)
				if err != nil {
					return err
				}
				if rows[i], err = revisionRows(c.Context(), cl, str(rev, "id")); err != nil {
					return err
				}
				names[i] = fmt.Sprintf("%s (revision %s, version %s, %d rows)", ref, str(rev, "id"), versionOf(rev), len(rows[i]))
			}
			d := diffTestsetRows(rows[0], rows[1])
			if a.out != "table" {
				t := output.Table{Header: []string{"change", "row", "name", "detail"}, Raw: d.raw()}
				for _, col := range d.ColumnsAdded {
					t.Rows = append(t.Rows, []string{"column added", "", col, ""})
				}
				for _, col := range d.ColumnsRemoved {
					t.Rows = append(t.Rows, []string{"column removed", "", col, ""})
				}
				for _, r := range d.Removed {
					t.Rows = append(t.Rows, []string{"removed", fmt.Sprint(r.Row), r.Name, string(r.Data)})
				}
				for _, r := range d.Added {
					t.Rows = append(t.Rows, []string{"added", fmt.Sprint(r.Row), r.Name, string(r.Data)})
				}
				for _, r := range d.Changed {
					b, _ := json.Marshal(r.Changes)
					t.Rows = append(t.Rows, []string{"changed", fmt.Sprint(r.Row), r.Name, string(b)})
				}
				return a.write(t)
			}
			if d.empty() {
				fmt.Fprintln(a.stdout, "no differences")
				return nil
			}
			d.writeText(a.stdout, names[0], names[1])
			return nil
		},
	}
	// Rows are no longer a unified diff of lines; the flag is kept so
	// scripts that pass it do not break.
	c.Flags().IntP("context", "U", 3, "unused: rows are matched by identity, not shown as a unified diff")
	_ = c.Flags().MarkDeprecated("context", "rows are matched by identity; there is no context to show")
	return c
}
