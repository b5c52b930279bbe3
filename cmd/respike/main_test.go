package main

import (
	"os"
	"strings"
	"testing"
)

func TestLoadConfig(t *testing.T) {
	t.Chdir(t.TempDir())

	// No file: the defaults.
	cfg, err := loadConfig("", "")
	if err != nil || cfg.Server.Listen != "127.0.0.1:6379" || cfg.Path != "" {
		t.Fatalf("defaults: %+v %v", cfg.Server, err)
	}

	// proxy.toml in the working directory is read when present.
	if err := os.WriteFile(defaultConfig, []byte("[server]\nlisten = \"127.0.0.1:7001\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err = loadConfig("", "")
	if err != nil || cfg.Server.Listen != "127.0.0.1:7001" || cfg.Path != defaultConfig {
		t.Fatalf("proxy.toml: %+v %v", cfg.Server, err)
	}

	// -listen overrides the file, and is validated.
	cfg, err = loadConfig("", "127.0.0.1:7002")
	if err != nil || cfg.Server.Listen != "127.0.0.1:7002" {
		t.Fatalf("-listen: %+v %v", cfg.Server, err)
	}
	if _, err := loadConfig("", "127.0.0.1:99999"); err == nil || !strings.Contains(err.Error(), "server.listen") {
		t.Fatalf("bad -listen: %v", err)
	}

	// An explicit file that does not exist is an error, not the defaults.
	if _, err := loadConfig("missing.toml", ""); err == nil {
		t.Fatal("missing -config file accepted")
	}
}
