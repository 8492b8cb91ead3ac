package ui

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"

	"attractorlab/assets"
)

// appTheme embeds the default theme and overrides the variant (light,
// dark, or the system's), in presentation mode the type sizes, and the
// text font: DejaVu Sans Condensed, which has every glyph the window writes (arrows,
// ✓ ✗, σ², λ, ≤, −), where Fyne's Noto Sans draws boxes for some.
type appTheme struct {
	fyne.Theme
	variant *fyne.ThemeVariant // nil: follow the system
	scale   float32
}

func (t *appTheme) Color(n fyne.ThemeColorName, v fyne.ThemeVariant) color.Color {
	if t.variant != nil {
		v = *t.variant
	}
	return t.Theme.Color(n, v)
}

// The bundled text fonts (assets/fonts).
var (
	textFont     = fyne.NewStaticResource("DejaVuSansCondensed.ttf", assets.FontRegular)
	textFontBold = fyne.NewStaticResource("DejaVuSansCondensed-Bold.ttf", assets.FontBold)
)

// Font is DejaVu Sans Condensed for plain and bold text; italic and monospace text
// keep Fyne's fonts (Noto Sans Italic, DejaVu Sans Mono).
func (t *appTheme) Font(s fyne.TextStyle) fyne.Resource {
	switch {
	case s.Monospace || s.Symbol || s.Italic:
		return t.Theme.Font(s)
	case s.Bold:
		return textFontBold
	}
	return textFont
}

func (t *appTheme) Size(n fyne.ThemeSizeName) float32 {
	s := t.Theme.Size(n)
	switch n {
	case theme.SizeNameText, theme.SizeNameCaptionText, theme.SizeNameHeadingText, theme.SizeNameSubHeadingText:
		return s * t.scale
	}
	return s
}

// themeChoice names the theme preference values.
var themeChoices = []string{"System", "Light", "Dark"}

// newTheme is the theme for the choice ("System", "Light", "Dark") with
// type scale times the default size (1 outside presentation mode; see
// presentScale).
func newTheme(choice string, scale float32) *appTheme {
	t := &appTheme{Theme: theme.DefaultTheme(), scale: scale}
	switch choice {
	case "Light":
		v := theme.VariantLight
		t.variant = &v
	case "Dark":
		v := theme.VariantDark
		t.variant = &v
	}
	return t
}

// presentScale is presentation mode's type scale for a window of size s:
// 1.5 at 1280×800 and below, growing with the window as far as both its
// sides allow (2.0 on a 1920×1080 screen), at most 2.5, so type read from
// the back of a room at 1280 is as readable on a larger screen.
func presentScale(s fyne.Size) float32 {
	g := min(s.Width/1280, s.Height/800)
	return 1.5 * max(1, min(g, 5.0/3))
}

// typeScale is the window's type scale now.
func (m *Main) typeScale() float32 {
	if !m.presentation {
		return 1
	}
	return presentScale(m.win.Canvas().Size())
}

func themeCaption() float32        { return theme.CaptionTextSize() }
func themeForeground() color.Color { return theme.Color(theme.ColorNameForeground) }
