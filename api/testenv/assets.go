package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// assetsEnv is the variable controller-runtime's envtest reads as well.
const assetsEnv = "KUBEBUILDER_ASSETS"

var errNoAssets = errors.New("no kube-apiserver and etcd found: run `make envtest-assets` " +
	"(it builds them from the Go module proxy) or set " + assetsEnv)

// AssetsDir returns the folder with kube-apiserver and etcd: KUBEBUILDER_ASSETS
// if set, else the newest build in the cache of `make envtest-assets`.
func AssetsDir() (string, error) {
	if dir := os.Getenv(assetsEnv); dir != "" {
		if err := checkAssets(dir); err != nil {
			return "", fmt.Errorf("%s=%s: %w", assetsEnv, dir, err)
		}
		return dir, nil
	}
	cache, err := cacheDir()
	if err != nil {
		return "", err
	}
	builds, err := filepath.Glob(filepath.Join(cache, "envtest", "k8s-*"))
	if err != nil {
		return "", fmt.Errorf("listing %s: %w", cache, err)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(builds)))
	for _, dir := range builds {
		if checkAssets(dir) == nil {
			return dir, nil
		}
	}
	return "", errNoAssets
}

// cacheDir mirrors CACHE_DIR of the Makefile.
func cacheDir() (string, error) {
	if dir := os.Getenv("LM_CACHE_DIR"); dir != "" {
		return dir, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the user cache folder: %w", err)
	}
	return filepath.Join(base, "lifecycle-manager"), nil
}

func checkAssets(dir string) error {
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		info, err := os.Stat(filepath.Join(dir, bin))
		if err != nil {
			return fmt.Errorf("%s missing: %w", bin, err)
		}
		if info.Mode()&0o111 == 0 {
			return fmt.Errorf("%s in %s is not executable", bin, dir)
		}
	}
	return nil
}
