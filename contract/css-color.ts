/**
 * CSS colours as the `replacement` field accepts them: keywords (`white`, `rebeccapurple`,
 * `transparent`), hex (`#rgb`, `#rgba`, `#rrggbb`, `#rrggbbaa`), `rgb()`/`rgba()`, `hsl()`/`hsla()` and
 * `hwb()`, in the comma or space syntax, parsed by color-string. HSL and HWB are converted to sRGB
 * with the CSS Color 4 formulas.
 */
import colorString from "color-string";

/** An sRGB colour: channels 0..255 (integers), alpha 0..1. */
export interface Rgba {
  red: number;
  green: number;
  blue: number;
  alpha: number;
}

/** CSS Color 4 `hsl()` to sRGB on 0..1 (hue in degrees, saturation and lightness in percent). */
function hslToRgb(hue: number, saturation: number, lightness: number): [number, number, number] {
  const s = saturation / 100;
  const l = lightness / 100;
  const channel = (n: number) => {
    const k = (n + hue / 30) % 12;
    return l - s * Math.min(l, 1 - l) * Math.max(-1, Math.min(k - 3, 9 - k, 1));
  };
  return [channel(0), channel(8), channel(4)];
}

/** CSS Color 4 `hwb()` to sRGB on 0..1 (hue in degrees, whiteness and blackness in percent). */
function hwbToRgb(hue: number, whiteness: number, blackness: number): [number, number, number] {
  const white = whiteness / 100;
  const black = blackness / 100;
  if (white + black >= 1) {
    const grey = white / (white + black);
    return [grey, grey, grey];
  }
  const [r, g, b] = hslToRgb(hue, 100, 50);
  const scale = 1 - white - black;
  return [r * scale + white, g * scale + white, b * scale + white];
}

const toByte = (unit: number) => Math.min(255, Math.max(0, Math.round(unit * 255)));

/** The colour `text` names, or undefined when it is not a CSS colour. */
export function parseCssColor(text: string): Rgba | undefined {
  const parsed = colorString.get(text.trim());
  if (!parsed) return undefined;
  const [x, y, z, alpha = 1] = parsed.value as [number, number, number, number?];
  if (![x, y, z, alpha].every(Number.isFinite)) return undefined;
  let rgb: [number, number, number];
  switch (parsed.model) {
    case "rgb":
      rgb = [x / 255, y / 255, z / 255];
      break;
    case "hsl":
      rgb = hslToRgb(((x % 360) + 360) % 360, y, z);
      break;
    case "hwb":
      rgb = hwbToRgb(((x % 360) + 360) % 360, y, z);
      break;
  }
  return { red: toByte(rgb[0]), green: toByte(rgb[1]), blue: toByte(rgb[2]), alpha: Math.min(1, Math.max(0, alpha)) };
}

/** `#rrggbb`, or `#rrggbbaa` when not opaque. */
export function hexOf({ red, green, blue, alpha }: Rgba): string {
  const hex = (value: number) => value.toString(16).padStart(2, "0");
  return `#${hex(red)}${hex(green)}${hex(blue)}${alpha < 1 ? hex(Math.round(alpha * 255)) : ""}`;
}
