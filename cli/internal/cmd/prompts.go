package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/assayhq/assay/cli/internal/api"
	"github.com/assayhq/assay/cli/internal/output"
)

func (a *app) promptsCmd() *cobra.Command {
	p := group("prompts", "Pull and push an application's parameters (its prompt) as YAML or JSON, for review in git", "prompt")
	var file, revision, format string
	pull := &cobra.Command{
		Use:   "pull APP",
		Short: "Write a revision's parameters as YAML (default) or JSON",
		Long: `Writes data.parameters of APP's revision (latest, or --revision) to --file
(format from its extension, .yaml/.yml or .json) or to standard output
(--format yaml|json). YAML starts with a comment naming the revision.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			cl, err := a.client()
			if err != nil {
				return err
			}
			rev, err := retrieveRevision(c.Context(), cl, "application", revRef(args[0], revision))
			if err != nil {
				return err
			}
			params := sub(rev, "data")["parameters"]
			if params == nil {
				params = obj{}
			}
			f := format
			if file != "" && f == "" {
				f = fileFormat(file)
			}
			if f == "" {
				f = "yaml"
			}
			var b []byte
			switch f {
			case "json":
				b, err = json.MarshalIndent(params, "", "  ")
				b = append(b, '\n')
			case "yaml":
				var buf bytes.Buffer
				fmt.Fprintf(&buf, "# assay: application %s, revision %s (version %s)\n", args[0], str(rev, "id"), versionOf(rev))
				enc := yaml.NewEncoder(&buf)
				enc.SetIndent(2)
				err = enc.Encode(params)
				b = buf.Bytes()
			default:
				return usagef("--format must be yaml or json")
			}
			if err != nil {
				return err
			}
			if file == "" {
				_, err = a.stdout.Write(b)
				return err
			}
			if err := os.WriteFile(file, b, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "wrote the parameters of revision %s to %s\n", str(rev, "id"), file)
			return nil
		},
	}
	pull.Flags().StringVarP(&file, "file", "f", "", "write to this file instead of standard output")
	pull.Flags().StringVarP(&revision, "revision", "r", "", "revision id or version (default: the latest)")
	pull.Flags().StringVar(&format, "format", "", "yaml or json (default: from --file, else yaml)")
	p.AddCommand(pull)

	var message string
	var force bool
	push := &cobra.Command{
		Use:   "push APP FILE",
		Short: "Commit FILE's parameters (YAML or JSON) as APP's next revision",
		Long: `Reads the parameters from FILE (YAML or JSON, - for standard input) and commits
a new revision of APP's latest one with them, the rest of its data kept. The
commit names the revision it was based on, so a revision committed by someone
else meanwhile is a conflict (exit 1) rather than silently overwritten.`,
		Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			cl, err := a.client()
			if err != nil {
				return err
			}
			var raw []byte
			if args[1] == "-" {
				raw, err = readAll(a.stdin)
			} else {
				raw, err = os.ReadFile(args[1])
			}
			if err != nil {
				return api.Errorf(api.ExitError, "%v", err)
			}
			var params map[string]any
			if fileFormat(args[1]) == "json" {
				err = json.Unmarshal(raw, &params)
			} else {
				err = yaml.Unmarshal(raw, &params)
			}
			if err != nil {
				return api.Errorf(api.ExitError, "%s: %v", args[1], err)
			}
			if params == nil {
				return api.Errorf(api.ExitError, "%s holds no parameters object", args[1])
			}
			rev, err := retrieveRevision(c.Context(), cl, "application", args[0])
			if err != nil {
				return err
			}
			data := sub(rev, "data")
			if data == nil {
				data = obj{}
			}
			// A push from CI on every build would otherwise stack identical
			// revisions, each a version number that means nothing.
			if !force && sameJSON(data["parameters"], params) {
				if a.out == "table" {
					_, err := fmt.Fprintf(a.stdout, "unchanged: %s v%s\n", args[0], versionOf(rev))
					return err
				}
				return a.write(output.Table{Header: []string{"status", "revision_id", "version"},
					Raw:  obj{"status": "unchanged", "application_revision": rev},
					Rows: [][]string{{"unchanged", str(rev, "id"), versionOf(rev)}}})
			}
			data["parameters"] = params
			delete(data, "url") // derived from the uri by the registry
			body := obj{"application_id": str(rev, "application_id"), "application_variant_id": str(rev, "application_variant_id"),
				"base_revision_id": str(rev, "id"), "data": data}
			if message != "" {
				body["message"] = message
			}
			var out obj
			if err := cl.JSON(c.Context(), "POST", "/api/applications/revisions/commit", obj{"application_revision": body}, &out); err != nil {
				return err
			}
			nr := sub(out, "application_revision")
			status := first(str(out, "status"), "committed")
			if str(nr, "id") == str(rev, "id") {
				status = "no_change"
			}
			return a.write(output.Table{Header: []string{"status", "revision_id", "version"}, Raw: out,
				Rows: [][]string{{status, str(nr, "id"), versionOf(nr)}}})
		},
	}
	push.Flags().StringVarP(&message, "message", "m", "", "commit message")
	push.Flags().BoolVar(&force, "force", false, "commit a new revision even when the parameters are unchanged")
	p.AddCommand(push)
	return p
}

func fileFormat(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".json":
		return "json"
	case ".yaml", ".yml":
		return "yaml"
	}
	return ""
}

// sameJSON compares two values as JSON documents: YAML decodes 1 as an int
// where the server's JSON answer holds 1.0, and key order never matters.
func sameJSON(a, b any) bool {
	norm := func(v any) (any, bool) {
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, false
		}
		var out any
		err = json.Unmarshal(raw, &out)
		return out, err == nil
	}
	na, okA := norm(a)
	nb, okB := norm(b)
	return okA && okB && reflect.DeepEqual(na, nb)
}

func readAll(r io.Reader) ([]byte, error) { return io.ReadAll(io.LimitReader(r, 16<<20)) }
