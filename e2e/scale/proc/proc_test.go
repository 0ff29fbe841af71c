package proc_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/e2e/scale/proc"
)

func TestUsageFromFiles(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "42")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	// A command name with spaces and a ')' must not shift the fields.
	stat := "42 (kcp op) x) S 1 42 42 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 12 0 100 1000 200\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644))
	status := "Name:\tkcp-operator\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\nThreads:\t12\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "status"), []byte(status), 0o644))

	u, err := proc.Reader{Root: root}.Usage(42)
	require.NoError(t, err)
	assert.InDelta(t, 3.25, u.CPUSeconds, 1e-9, "(250+75) ticks at 100 Hz")
	assert.Equal(t, int64(100<<20), u.RSS)
	assert.Equal(t, int64(200<<20), u.PeakRSS)

	_, err = proc.Reader{Root: root}.Usage(43)
	require.ErrorContains(t, err, "process 43")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stat"), []byte("42 (broken"), 0o644))
	_, err = proc.Reader{Root: root}.Usage(42)
	require.ErrorContains(t, err, "malformed stat")
}

func TestUsageOfThisProcess(t *testing.T) {
	u, err := proc.Default.Usage(os.Getpid())
	require.NoError(t, err)
	assert.Positive(t, u.RSS)
	assert.GreaterOrEqual(t, u.PeakRSS, u.RSS)
	assert.GreaterOrEqual(t, u.CPUSeconds, 0.0)
}

func TestMachineAndLoad(t *testing.T) {
	m := proc.Default.Machine()
	assert.Positive(t, m.CPUs)
	assert.Positive(t, m.MemoryGB)
	load, err := proc.Default.LoadAverage()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, load[0], 0.0)
}

func TestCPUByProgram(t *testing.T) {
	root := t.TempDir()
	process := func(pid, argv0 string, ticks int) {
		dir := filepath.Join(root, pid)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		stat := pid + " (x) S 1 1 1 0 -1 0 0 0 0 0 " + strconv.Itoa(ticks) + " 0 0 0 20 0 1 0 1 1 1\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "cmdline"), []byte(argv0+"\x00--flag=1\x00"), 0o644))
	}
	process("10", "/bin/etcd", 150)
	process("11", "/bin/etcd", 50)
	process("12", "/bin/kcp-operator", 300)
	process("13", "/bin/bash", 999)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "self"), 0o755), "not a process")

	got, err := proc.Reader{Root: root}.CPUByProgram(func(pid int, argv []string) string {
		assert.Equal(t, "--flag=1", argv[1], "arguments split at NUL, without the trailing one")
		if base := filepath.Base(argv[0]); base != "bash" {
			return base
		}
		return ""
	})
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{"etcd": 2, "kcp-operator": 3}, got)
}

func TestMachineCPU(t *testing.T) {
	root := t.TempDir()
	write := func(line string) {
		require.NoError(t, os.WriteFile(filepath.Join(root, "stat"), []byte(line+"\ncpu0 1 2 3 4 5 6 7 8 0 0\nintr 1\n"), 0o644))
	}
	r := proc.Reader{Root: root}
	write("cpu  1000 0 500 8000 100 0 0 0 0 0")
	before, err := r.MachineCPU()
	require.NoError(t, err)
	// 10 s of two CPUs (2,000 ticks): 1,200 busy (user, nice, system,
	// irq, softirq), 400 idle, 200 iowait, 200 steal.
	write("cpu  1900 100 600 8400 300 50 50 200 900 0")
	after, err := r.MachineCPU()
	require.NoError(t, err)

	got := before.SharesUntil(after)

	assert.InDelta(t, 0.6, got.Busy, 1e-9, "guest time is inside user and not counted twice")
	assert.InDelta(t, 0.2, got.Idle, 1e-9)
	assert.InDelta(t, 0.1, got.IOWait, 1e-9)
	assert.InDelta(t, 0.1, got.Steal, 1e-9)
	assert.Equal(t, proc.CPUShares{}, after.SharesUntil(after), "no time passed")

	write("cpu 1 2 3")
	_, err = r.MachineCPU()
	require.ErrorContains(t, err, "malformed /proc/stat")
}

func TestMachineCPUOfThisMachine(t *testing.T) {
	c, err := proc.Default.MachineCPU()
	require.NoError(t, err)
	assert.Positive(t, c.Busy+c.Idle)
}
