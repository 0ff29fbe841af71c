package maintenance

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Period is one concrete maintenance window: from Begin (inclusive) to End
// (exclusive), in the window's zone.
type Period struct {
	Begin, End time.Time
}

// IsZero reports whether p is no window at all.
func (p Period) IsZero() bool { return p.Begin.IsZero() && p.End.IsZero() }

// Contains reports whether t lies within p.
func (p Period) Contains(t time.Time) bool { return !t.Before(p.Begin) && t.Before(p.End) }

// String names the period in its zone with the offset, so that a message
// carrying it reads the same on every reconcile and in every time zone.
func (p Period) String() string {
	return p.Begin.Format(time.RFC3339) + " to " + p.End.Format(time.RFC3339)
}

// window is a compiled window of a policy: weekly (days set) or dated.
type window struct {
	days [7]bool // by time.Weekday
	// weekly: the clock times of begin and end, in loc.
	begin, end clock
	loc        *time.Location
	// dated: the absolute period.
	dated Period
}

type clock struct{ h, m, s int }

func (w window) weekly() bool { return w.dated.IsZero() }

// before reports whether c comes before o on the clock.
func (c clock) before(o clock) bool {
	return c.h*3600+c.m*60+c.s < o.h*3600+o.m*60+o.s
}

// parseWeekday reads Mon or Monday, in any case.
func parseWeekday(s string) (time.Weekday, bool) {
	for d := time.Sunday; d <= time.Saturday; d++ {
		if strings.EqualFold(s, d.String()) || strings.EqualFold(s, d.String()[:3]) {
			return d, true
		}
	}
	return 0, false
}

// compileWindow checks a window of the file and fixes its zone: the
// window's own, else zone.
func compileWindow(wd windowDoc, zone *time.Location) (window, error) {
	w := window{loc: zone}
	if wd.TimeZone != "" {
		loc, err := time.LoadLocation(wd.TimeZone)
		if err != nil {
			return w, fmt.Errorf("timeZone: %w", err)
		}
		w.loc = loc
	}
	if len(wd.Days) == 0 {
		return compileDated(wd, w)
	}
	var errs []error
	for _, d := range wd.Days {
		day, ok := parseWeekday(d)
		if !ok {
			errs = append(errs, fmt.Errorf("days: %q is not a day of the week (Mon, Tue, ... or Monday, Tuesday, ...)", d))
			continue
		}
		w.days[day] = true
	}
	begin, bloc, berr := parseClock(wd.Begin)
	end, eloc, eerr := parseClock(wd.End)
	if berr != nil {
		errs = append(errs, fmt.Errorf("begin: %w", berr))
	}
	if eerr != nil {
		errs = append(errs, fmt.Errorf("end: %w", eerr))
	}
	if err := errors.Join(errs...); err != nil {
		return w, err
	}
	switch {
	case bloc == nil && eloc == nil:
	case bloc == nil || eloc == nil || bloc.String() != eloc.String():
		return w, errors.New("begin and end: give both the same offset, or neither")
	case wd.TimeZone != "":
		return w, errors.New("timeZone and an offset in begin and end: give one of them")
	default:
		w.loc = bloc
	}
	w.begin, w.end = begin, end
	return w, nil
}

// compileDated checks a window with an absolute begin and end.
func compileDated(wd windowDoc, w window) (window, error) {
	begin, berr := parseInstant(wd.Begin, w.loc)
	end, eerr := parseInstant(wd.End, w.loc)
	if err := errors.Join(wrap("begin", berr), wrap("end", eerr)); err != nil {
		return w, fmt.Errorf("%w (a window without days is dated: RFC 3339 times, or local ones in its timeZone)", err)
	}
	if !end.After(begin) {
		return w, fmt.Errorf("end %s is not after begin %s", wd.End, wd.Begin)
	}
	w.dated = Period{Begin: begin, End: end}
	return w, nil
}

func wrap(field string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", field, err)
}

// parseClock reads HH:MM or HH:MM:SS, with an optional offset (Z, +02:00);
// loc is nil without one.
func parseClock(s string) (clock, *time.Location, error) {
	for _, layout := range []string{"15:04:05Z07:00", "15:04Z07:00", "15:04:05", "15:04"} {
		t, err := time.Parse(layout, s)
		if err != nil {
			continue
		}
		var loc *time.Location
		if strings.Contains(layout, "Z07") {
			_, offset := t.Zone()
			loc = time.FixedZone(offsetName(offset), offset)
		}
		return clock{t.Hour(), t.Minute(), t.Second()}, loc, nil
	}
	return clock{}, nil, fmt.Errorf("%q is not a time of day (HH:MM or HH:MM:SS, optionally with an offset such as Z)", s)
}

func offsetName(offset int) string {
	if offset == 0 {
		return "UTC"
	}
	return time.Unix(0, 0).In(time.FixedZone("", offset)).Format("-07:00")
}

// parseInstant reads an RFC 3339 time, or a local date and time in loc.
func parseInstant(s string, loc *time.Location) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.In(loc), nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date and time (RFC 3339, or 2006-01-02T15:04 in the window's zone)", s)
}

// next returns the period of w that is open at now, else the next one to
// begin; false when w has none (a dated window that is over).
func (w window) next(now time.Time) (Period, bool) {
	if !w.weekly() {
		return w.dated, now.Before(w.dated.End)
	}
	local := now.In(w.loc)
	// From yesterday: a window that began yesterday may run past midnight
	// (Sunday 22:00 to Monday 02:00 is open on Monday at 01:00). Eight
	// days on, every weekday has come once more.
	for offset := -1; offset <= 7; offset++ {
		day := time.Date(local.Year(), local.Month(), local.Day()+offset, 0, 0, 0, 0, w.loc)
		if !w.days[day.Weekday()] {
			continue
		}
		p := w.on(day)
		if now.Before(p.End) {
			return p, true
		}
	}
	return Period{}, false
}

// on returns the period of w that begins on day. An end at or before the
// begin on the clock is on the next day. Dates are built from the calendar,
// not by adding hours, so that a window keeps its clock times across
// daylight saving changes (a time the change skips moves on by the skip).
func (w window) on(day time.Time) Period {
	y, m, d := day.Date()
	endDay := d
	if !w.begin.before(w.end) {
		endDay++
	}
	return Period{
		Begin: time.Date(y, m, d, w.begin.h, w.begin.m, w.begin.s, 0, w.loc),
		End:   time.Date(y, m, endDay, w.end.h, w.end.m, w.end.s, 0, w.loc),
	}
}

// earliest returns, of the periods of windows at now, one that is open
// (the one that stays open longest), else the one that begins first.
func earliest(windows []window, now time.Time) (Period, bool) {
	var best Period
	found := false
	for _, w := range windows {
		p, ok := w.next(now)
		if !ok {
			continue
		}
		switch {
		case !found:
			best, found = p, true
		case p.Contains(now) && (!best.Contains(now) || p.End.After(best.End)):
			best = p
		case !best.Contains(now) && p.Begin.Before(best.Begin):
			best = p
		}
	}
	return best, found
}
