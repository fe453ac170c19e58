package cmd

import (
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/assayhq/assay/cli/internal/api/gen"
	"github.com/assayhq/assay/cli/internal/output"
)

func (a *app) appsCmd() *cobra.Command {
	apps := group("apps", "List, show and deploy applications", "app", "applications")
	apps.AddCommand(&cobra.Command{
		Use: "list", Short: "List the project's applications", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cl, err := a.client()
			if err != nil {
				return err
			}
			var out struct {
				Applications []obj `json:"applications"`
			}
			if err := cl.JSON(c.Context(), "POST", "/api/simple/applications/query", obj{}, &out); err != nil {
				return err
			}
			t := output.Table{Header: []string{"id", "slug", "name", "revision_id", "uri"}, Raw: out.Applications}
			for _, r := range out.Applications {
				t.Rows = append(t.Rows, []string{str(r, "id"), str(r, "slug"), str(r, "name"), str(r, "revision_id"), str(r, "data", "uri")})
			}
			return a.write(t)
		},
	})
	var revision string
	show := &cobra.Command{
		Use: "show APP", Short: "Show an application's revision (latest, or --revision): uri, url, parameters", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			cl, err := a.client()
			if err != nil {
				return err
			}
			rev, err := retrieveRevision(c.Context(), cl, "application", revRef(args[0], revision))
			if err != nil {
				return err
			}
			params, _ := json.Marshal(sub(rev, "data")["parameters"])
			t := output.Table{Header: []string{"field", "value"}, Raw: rev, Wide: true, Rows: [][]string{
				{"application_id", str(rev, "application_id")},
				{"variant_id", str(rev, "application_variant_id")},
				{"revision_id", str(rev, "id")},
				{"version", versionOf(rev)},
				{"message", str(rev, "message")},
				{"uri", str(rev, "data", "uri")},
				{"url", str(rev, "data", "url")},
				{"parameters", string(params)},
			}}
			return a.write(t)
		},
	}
	show.Flags().StringVarP(&revision, "revision", "r", "", "revision id or version (default: the latest)")
	apps.AddCommand(show)

	var depRevision, key, message string
	deploy := &cobra.Command{
		Use:   "deploy APP ENV",
		Short: "Deploy an application's revision (latest, or --revision) to an environment",
		Long: `Writes the revision into a new revision of environment ENV (slug or id) under
--key (default <app slug>.revision), through POST /api/applications/revisions/deploy.`,
		Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			cl, err := a.client()
			if err != nil {
				return err
			}
			rev, err := retrieveRevision(c.Context(), cl, "application", revRef(args[0], depRevision))
			if err != nil {
				return err
			}
			env := gen.Ref{Slug: gen.NewOptString(args[1])}
			if id, err := uuid.Parse(args[1]); err == nil && isUUID(args[1]) {
				env = gen.Ref{ID: gen.NewOptUUID(id)}
			}
			revID, err := uuid.Parse(str(rev, "id"))
			if err != nil {
				return fmt.Errorf("the server's revision has no id: %v", err)
			}
			req := gen.PostApplicationsRevisionsDeployReq{
				ApplicationRevisionRef: gen.NewOptRef(gen.Ref{ID: gen.NewOptUUID(revID)}),
				EnvironmentRef:         gen.NewOptRef(env),
			}
			if key != "" {
				req.Key = gen.NewOptString(key)
			}
			if message != "" {
				req.Message = gen.NewOptString(message)
			}
			var out obj
			if err := cl.JSON(c.Context(), "POST", "/api/applications/revisions/deploy", &req, &out); err != nil {
				return err
			}
			if count(out) == 0 {
				return fmt.Errorf("the server deployed nothing (no environment %q?)", args[1])
			}
			return a.write(output.Table{Header: []string{"application", "revision_id", "version", "environment"}, Raw: out,
				Rows: [][]string{{args[0], str(rev, "id"), versionOf(rev), args[1]}}})
		},
	}
	deploy.Flags().StringVarP(&depRevision, "revision", "r", "", "revision id or version (default: the latest)")
	deploy.Flags().StringVar(&key, "key", "", "deployment key in the environment (default <app slug>.revision)")
	deploy.Flags().StringVarP(&message, "message", "m", "", "message of the environment's new revision")
	apps.AddCommand(deploy)
	return apps
}

// revRef combines an artifact reference and an optional --revision (an id,
// or a version of the artifact) into one retrieveRevision reference.
func revRef(artifact, revision string) string {
	switch {
	case revision == "":
		return artifact
	case isUUID(revision):
		return revision
	}
	return artifact + "@" + revision
}
