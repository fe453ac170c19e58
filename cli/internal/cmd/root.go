// Package cmd holds the assay commands (cobra). Run is the whole program:
// it returns the exit code instead of exiting, so tests and main share it.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/assayhq/assay/cli/internal/api"
	"github.com/assayhq/assay/cli/internal/config"
	"github.com/assayhq/assay/cli/internal/output"
)

// app is the state shared by the commands of one invocation.
type app struct {
	stdout, stderr io.Writer
	stdin          io.Reader

	url, key, profile, out string
	timeout                time.Duration
}

// Run executes the command line args and returns the exit code.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	a := &app{stdout: stdout, stderr: stderr, stdin: stdin}
	root := a.root()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	code := api.CodeOf(err)
	var u usageError
	if errors.As(err, &u) || isCobraUsage(err) {
		code = api.ExitUsage
	}
	fmt.Fprintln(stderr, "assay: "+strings.TrimSpace(err.Error()))
	return code
}

// usageError marks a bad command line (exit 2).
type usageError struct{ error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// isCobraUsage recognises cobra's own argument and flag errors, which come
// back as plain errors.
func isCobraUsage(err error) bool {
	s := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires at least",
		"flag needs an argument", "invalid argument", "required flag", "if any flags in the group"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

func (a *app) root() *cobra.Command {
	root := &cobra.Command{
		Use:   "assay",
		Short: "Work with an Assay platform: testsets, applications, prompts, traces, keys and evaluations",
		Long: `assay talks to an Assay gateway with an API key.

Configuration, highest first: flags (--url, --api-key, --profile), the
environment (ASSAY_URL, ASSAY_API_KEY, ASSAY_PROFILE), then the profile file
(~/.config/assay/config.yaml or $ASSAY_CONFIG) that ` + "`assay login`" + ` writes.

Exit codes: 0 ok, 1 error, 2 usage, 3 evaluation gate failed, 4 server
unreachable, 5 key refused (401/403), 6 not found.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(c *cobra.Command, _ []string) error {
			if !output.Valid(a.out) {
				return usagef("--output must be one of %s, not %q", strings.Join(output.Formats, ", "), a.out)
			}
			return nil
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	pf := root.PersistentFlags()
	pf.StringVar(&a.url, "url", "", "gateway URL (env ASSAY_URL; default from the profile, else "+config.DefaultURL+")")
	pf.StringVar(&a.key, "api-key", "", "API key (env ASSAY_API_KEY; default from the profile)")
	pf.StringVar(&a.profile, "profile", "", "profile in the config file (env ASSAY_PROFILE; default: the file's current one, else \"default\")")
	pf.StringVarP(&a.out, "output", "o", "table", "output of reads: table, json or csv")
	pf.DurationVar(&a.timeout, "request-timeout", 2*time.Minute, "time limit of each HTTP request")
	root.AddCommand(a.loginCmd(), a.testsetsCmd(), a.appsCmd(), a.promptsCmd(), a.tracesCmd(), a.keysCmd(), a.evalCmd())
	return root
}

// settings resolves the URL, key and profile name (flags, then
// environment, then the profile file).
func (a *app) settings() (url, key, profile string, err error) {
	profile = first(a.profile, os.Getenv("ASSAY_PROFILE"))
	url = first(a.url, os.Getenv("ASSAY_URL"))
	key = first(a.key, os.Getenv("ASSAY_API_KEY"))
	if url == "" || key == "" || profile == "" {
		path, err := config.Path()
		if err != nil {
			return "", "", "", err
		}
		f, err := config.Load(path)
		if err != nil {
			return "", "", "", err
		}
		profile = first(profile, f.Current, "default")
		if p := f.Profiles[profile]; p != nil {
			url, key = first(url, p.URL), first(key, p.APIKey)
		}
	}
	return first(url, config.DefaultURL), key, profile, nil
}

// client is the API client of the resolved settings; a missing key is an
// auth error that says how to set one.
func (a *app) client() (*api.Client, error) {
	url, key, profile, err := a.settings()
	if err != nil {
		return nil, err
	}
	if key == "" {
		return nil, api.Errorf(api.ExitAuth, "no API key: run `assay login` (profile %q), or set ASSAY_API_KEY or --api-key", profile)
	}
	return api.New(url, key, a.timeout), nil
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// write renders a table in the --output format.
func (a *app) write(t output.Table) error { return output.Write(a.stdout, a.out, t) }

// group is a command that only holds subcommands: alone it prints its
// help, with an unknown subcommand it is a usage error (cobra would print
// the help and exit 0, which hides a typo in a CI script).
func group(use, short string, aliases ...string) *cobra.Command {
	return &cobra.Command{Use: use, Short: short, Aliases: aliases, Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown command %q for %q", args[0], c.CommandPath())
			}
			return c.Help()
		}}
}
