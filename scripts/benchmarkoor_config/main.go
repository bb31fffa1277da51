// balgen-benchmarkoor-config: load a benchmarkoor configuration with benchmarkoor's own loader and
// validator (github.com/ethpandaops/benchmarkoor/pkg/config), so that the file `balgen genesis
// --layout benchmarkoor` writes is checked by the code that will read it, not by a copy of its rules.
//
// Usage: balgen-benchmarkoor-config FILE
// Prints one JSON object: each instance's id, client and extra arguments as benchmarkoor read them,
// and the EEST source's folders; exit 1 with benchmarkoor's error on stderr if it refuses the file.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/ethpandaops/benchmarkoor/pkg/config"
)

type instance struct {
	ID        string   `json:"id"`
	Client    string   `json:"client"`
	ExtraArgs []string `json:"extra_args"`
}

type summary struct {
	Instances        []instance `json:"instances"`
	LocalFixturesDir string     `json:"local_fixtures_dir"`
	FixturesSubdir   string     `json:"fixtures_subdir"`
	LocalGenesisDir  string     `json:"local_genesis_dir"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: balgen-benchmarkoor-config FILE")
		os.Exit(2)
	}
	cfg, err := config.Load(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out := summary{Instances: []instance{}}
	for _, each := range cfg.Runner.Instances {
		out.Instances = append(out.Instances, instance{each.ID, each.Client, append([]string{}, each.ExtraArgs...)})
	}
	if source := cfg.Runner.Benchmark.Tests.Source.EESTFixtures; source != nil {
		out.LocalFixturesDir, out.FixturesSubdir, out.LocalGenesisDir = source.LocalFixturesDir, source.FixturesSubdir, source.LocalGenesisDir
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
