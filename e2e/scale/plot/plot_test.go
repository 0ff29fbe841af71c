package plot

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRenderDrawsTheSeries checks the PNG's size and that each series is
// drawn in its colour where its data lies: the line's last point is the
// top right of the data, the dot sits low on the left (the legend, top
// left, holds the colours too, so the quadrants tell them apart).
func TestRenderDrawsTheSeries(t *testing.T) {
	c := Chart{
		Title: "Ready Kymas", XLabel: "seconds", YLabel: "kymas",
		Series: []Series{
			{Name: "ready", Points: []XY{{0, 0}, {10, 500}, {20, 1000}}},
			{Name: "edits", Points: []XY{{5, 250}}, Style: Dots},
		},
		Width: 400, Height: 300,
	}
	data, err := c.EncodePNG()
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(data))
	require.NoError(t, err)
	assert.Equal(t, image.Rect(0, 0, 400, 300), img.Bounds())

	topRight := image.Rect(200, 0, 400, 150)
	bottomLeft := image.Rect(0, 150, 200, 300)
	assert.Positive(t, countNear(img, topRight, palette[0]), "the line reaches its last point in the first colour")
	assert.Positive(t, countNear(img, bottomLeft, palette[1]), "the dot is drawn in the second colour")
	assert.Zero(t, countNear(img, topRight, palette[1]), "no dot where there is no point")
	assert.Positive(t, countNear(img, img.Bounds(), color.RGBA{A: 0xff}), "axes and text are black")

	path := filepath.Join(t.TempDir(), "ready.png")
	require.NoError(t, c.WriteFile(path))
	written, err := os.ReadFile(path)
	require.NoError(t, err)
	decoded, err := png.Decode(bytes.NewReader(written))
	require.NoError(t, err)
	assert.Equal(t, img.Bounds(), decoded.Bounds())
}

func TestDefaultSize(t *testing.T) {
	img, err := Chart{Series: []Series{{Points: []XY{{0, 1}, {1, 2}}}}}.Render()
	require.NoError(t, err)
	assert.Equal(t, image.Rect(0, 0, 960, 540), img.Bounds())
}

// TestBuildAxes: the Y axis starts at zero however high the data, and
// points that are not finite are left out, as is a series without points.
func TestBuildAxes(t *testing.T) {
	p, err := Chart{Series: []Series{
		{Name: "rate", Points: []XY{{10, 500}, {math.NaN(), 3}, {20, math.Inf(1)}, {30, 900}}},
		{Name: "release"},
	}}.build()
	require.NoError(t, err)
	assert.InDelta(t, 0, p.Y.Min, 0)
	assert.InDelta(t, 900, p.Y.Max, 0)
	assert.InDelta(t, 10, p.X.Min, 0)
	assert.InDelta(t, 30, p.X.Max, 0)

	p, err = Chart{Series: []Series{{Points: []XY{{0, -4}, {1, 2}}}}}.build()
	require.NoError(t, err)
	assert.InDelta(t, -4, p.Y.Min, 0, "data below zero keeps its minimum")
}

func TestRenderWithoutPoints(t *testing.T) {
	_, err := Chart{Title: "empty", Series: []Series{{Name: "none"}}}.Render()
	require.ErrorIs(t, err, ErrNoPoints)
	_, err = Chart{Series: []Series{{Points: []XY{{math.NaN(), 1}}}}}.Render()
	require.ErrorIs(t, err, ErrNoPoints, "only points that are not finite")
}

// countNear counts the pixels in r within a small distance of c: the
// lines are anti-aliased.
func countNear(img image.Image, r image.Rectangle, c color.RGBA) int {
	const tolerance = 24
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			p := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			if near(p.R, c.R, tolerance) && near(p.G, c.G, tolerance) && near(p.B, c.B, tolerance) {
				n++
			}
		}
	}
	return n
}

func near(a, b, tolerance uint8) bool {
	if a > b {
		return a-b <= tolerance
	}
	return b-a <= tolerance
}
