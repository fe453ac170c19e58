package main

import (
	"testing"

	"github.com/assayhq/assay/pkg/testutil/configtest"
)

func TestConfigDocumented(t *testing.T) { configtest.Documented(t, "CONSOLE", &Config{}) }
