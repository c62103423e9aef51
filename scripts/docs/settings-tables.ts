/** docs/configuration.md's tables: one per section of the settings in core/config.ts. */
import { SETTING_SECTIONS, SETTINGS, type Setting } from "../../core/config.js";
import { markdownTable } from "./markdown-table.js";

export function settingsTables(): string {
  const entries = Object.entries(SETTINGS) as [string, Setting][];
  return SETTING_SECTIONS.map((section) => {
    const rows = entries
      .filter(([, entry]) => entry.section === section)
      .map(([name, entry]) => [`\`${name}\``, entry.default, entry.accepts ?? "text", entry.meaning]);
    return `### ${section}\n\n${markdownTable(["Variable", "Default", "Accepts", "Meaning"], rows)}`;
  }).join("\n\n");
}
