package plot

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNiceAxis(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   axis
	}{
		{0, 1000, axis{min: 0, max: 1000, step: 200}},
		{0, 937, axis{min: 0, max: 1000, step: 200}},
		{0, 7.3, axis{min: 0, max: 8, step: 2}},
		{0.2, 0.9, axis{min: 0.2, max: 1, step: 0.2}},
		{0, 0.42, axis{min: 0, max: 0.5, step: 0.1}},
		{5, 5, axis{min: 5, max: 6, step: 0.2}},
	} {
		got := niceAxis(tc.lo, tc.hi)
		assert.InDelta(t, tc.want.min, got.min, 1e-9, "min of [%v, %v]", tc.lo, tc.hi)
		assert.InDelta(t, tc.want.max, got.max, 1e-9, "max of [%v, %v]", tc.lo, tc.hi)
		assert.InDelta(t, tc.want.step, got.step, 1e-9, "step of [%v, %v]", tc.lo, tc.hi)
	}
	a := niceAxis(0, 1000)
	assert.Equal(t, []float64{0, 200, 400, 600, 800, 1000}, a.ticks())
	assert.Equal(t, "1000", a.widestLabel())
	assert.Equal(t, "0.5", niceAxis(0, 0.9).label(0.5))
}

func TestRenderDrawsTheSeries(t *testing.T) {
	c := Chart{
		Title: "Ready Kymas", XLabel: "seconds", YLabel: "kymas",
		Series: []Series{
			{Name: "ready", Points: []XY{{0, 0}, {10, 500}, {20, 1000}}},
			{Name: "edits", Points: []XY{{5, 250}}, Style: Dots},
		},
		Width: 400, Height: 300,
	}
	img, err := c.Render()
	require.NoError(t, err)
	assert.Equal(t, image.Rect(0, 0, 400, 300), img.Bounds())
	assert.Positive(t, countColor(img, palette[0]), "the line is drawn in the first colour")
	assert.Positive(t, countColor(img, palette[1]), "the dots are drawn in the second colour")
	assert.Positive(t, countColor(img, color.RGBA{A: 0xff}), "axes and text are black")

	// The line ends where the data ends: the top-right corner of the frame
	// holds the last point of the first series.
	f, err := c.layout()
	require.NoError(t, err)
	x, y := f.px(XY{20, 1000})
	assert.Equal(t, palette[0], img.RGBAAt(x, y))

	path := filepath.Join(t.TempDir(), "ready.png")
	require.NoError(t, c.WriteFile(path))
	data, err := c.EncodePNG()
	require.NoError(t, err)
	decoded, err := png.Decode(bytes.NewReader(data))
	require.NoError(t, err)
	assert.Equal(t, img.Bounds(), decoded.Bounds())
}

func TestRenderWithoutPoints(t *testing.T) {
	_, err := Chart{Title: "empty", Series: []Series{{Name: "none"}}}.Render()
	require.ErrorIs(t, err, ErrNoPoints)
}

func TestTextUsesTheFont(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 40, 10))
	drawText(img, 0, 0, "1", color.RGBA{A: 0xff}, 1)
	// '1' has 10 set pixels in the font.
	assert.Equal(t, 10, countColor(img, color.RGBA{A: 0xff}))
	assert.Equal(t, 2*advance-1, textWidth("ab", 1))
	for r, g := range glyphs {
		for _, row := range g {
			assert.Len(t, row, glyphW, "glyph %q", r)
		}
	}
}

func countColor(img *image.RGBA, c color.RGBA) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if img.RGBAAt(x, y) == c {
				n++
			}
		}
	}
	return n
}
