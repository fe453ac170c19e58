// Command configdocs writes docs/configuration.md from the services' code:
// each service's `env` subcommand prints the rows of its variables
// (app.Usage), and configtest.Render lays them out. Run from the repository
// root (`make config-docs`).
package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"

	"github.com/assayhq/assay/pkg/testutil/configtest"
)

func main() {
	rows := map[string][]byte{}
	for _, s := range configtest.Services {
		var out, errOut bytes.Buffer
		cmd := exec.Command("go", "run", "./services/"+s+"/cmd/"+s, "env")
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "configdocs: %s env: %v\n%s", s, err, errOut.Bytes())
			os.Exit(1)
		}
		rows[s] = out.Bytes()
	}
	if err := os.WriteFile(configtest.Path, configtest.Render(rows), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "configdocs: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("wrote", configtest.Path)
}
