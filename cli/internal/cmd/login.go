package cmd

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/assayhq/assay/cli/internal/api"
	"github.com/assayhq/assay/cli/internal/config"
)

func (a *app) loginCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "login",
		Short: "Check an API key against the server and store it in a profile",
		Long: `Reads the key from --api-key, ASSAY_API_KEY, or standard input (asked for
without echo on a terminal), checks it with GET /api/profile, and stores the
URL and key under the profile (--profile, default "default"), which becomes
the current one. The file is written with mode 0600.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			url, _, profile, err := a.settings()
			if err != nil {
				return err
			}
			key := first(a.key, os.Getenv("ASSAY_API_KEY"))
			if key == "" {
				if key, err = a.readKey(); err != nil {
					return err
				}
			}
			if key == "" {
				return usagef("no API key given (--api-key, ASSAY_API_KEY or standard input)")
			}
			cl := api.New(url, key, a.timeout)
			var me struct {
				Email    string `json:"email"`
				Projects []struct {
					Name string `json:"name"`
				} `json:"projects"`
			}
			if err := cl.JSON(c.Context(), "GET", "/api/profile", nil, &me); err != nil {
				return err
			}
			path, err := config.Path()
			if err != nil {
				return err
			}
			f, err := config.Load(path)
			if err != nil {
				return err
			}
			f.Profiles[profile] = &config.Profile{URL: url, APIKey: key}
			f.Current = profile
			if err := f.Save(path); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Logged in to %s as %s (profile %q, saved in %s)\n", url, me.Email, profile, path)
			return nil
		},
	}
}

// readKey reads one line from standard input, without echo on a terminal.
func (a *app) readKey() (string, error) {
	if f, ok := a.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(a.stderr, "API key: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(a.stderr)
		return strings.TrimSpace(string(b)), err
	}
	line, err := bufio.NewReader(a.stdin).ReadString('\n')
	if err != nil && line == "" {
		return "", nil
	}
	return strings.TrimSpace(line), nil
}
