package fleet

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/lifecycle-manager/e2e/scale/plot"
)

// plots writes the PNG plots of what the run measured.
func (ru *run) plots() error {
	var errs []error
	write := func(name string, c plot.Chart) {
		if len(c.Series) == 0 || len(c.Series[0].Points) == 0 {
			return
		}
		if err := c.WriteFile(filepath.Join(ru.opts.OutDir, name)); err != nil {
			errs = append(errs, fmt.Errorf("plot %s: %w", name, err))
		}
	}
	title := fmt.Sprintf("%d Kymas x %d modules", ru.opts.Kymas, ru.opts.Modules)
	write("ready.png", plot.Chart{Title: title + ": Ready Kymas since the operator started",
		XLabel: "seconds", YLabel: "Kymas Ready", Series: []plot.Series{{Name: "Ready", Points: ru.ready.ready}}})
	write("reconciles.png", plot.Chart{Title: title + ": reconciles per second",
		XLabel: "seconds", YLabel: "reconciles/s", Series: []plot.Series{
			{Name: "convergence", Points: ru.ready.reconcileRate},
			{Name: "release of " + releaseVersion, Points: ru.release.reconcileRate}}})
	write("release.png", plot.Chart{Title: title + ": Kymas Ready on " + ModuleName(1) + " " + releaseVersion + " after its release",
		XLabel: "seconds", YLabel: "Kymas", Series: []plot.Series{{Name: releaseVersion, Points: ru.release.ready}}})
	var push []plot.Series
	for _, name := range []string{"idle", "load"} {
		s := plot.Series{Name: name, Style: plot.Dots}
		for _, e := range ru.push[name] {
			s.Points = append(s.Points, plot.XY{X: e.At.Seconds(), Y: float64(e.Latency.Milliseconds())})
		}
		if len(s.Points) > 0 {
			push = append(push, s)
		}
	}
	write("push-latency.png", plot.Chart{Title: title + ": runtime edit -> KCP Kyma shows it",
		XLabel: "seconds into the series", YLabel: "milliseconds", Series: push})
	return errors.Join(errs...)
}
