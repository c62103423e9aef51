// Usage page: draws the charts from the report the server embedded as JSON (the tables beside
// them carry the same numbers for screen readers and for copying). Chart.js is served by Atelier
// from node_modules (/static/vendor/chart.umd.min.js), never from a CDN.
"use strict";

const source = document.getElementById("usage-data");

if (source && window.Chart) {
  const report = JSON.parse(source.textContent || "{}");
  // Colour-blind-safe qualitative palette (Okabe–Ito), darkened where needed for contrast on white.
  const PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#8a6d00", "#56B4E9", "#000000"];
  const STATUS_COLOURS = { 2: "#009E73", 4: "#D55E00", 5: "#7a1f1f" };
  const hourly = report.bucketMs === 3600000;
  const labels = report.bucketStarts.map((start) => {
    const date = new Date(start);
    return hourly
      ? date.toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit", timeZone: "UTC" })
      : date.toLocaleDateString([], { month: "short", day: "numeric", timeZone: "UTC" });
  });
  const reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
  // Labels and grid in the page's own colours (console.css), so they read in the light and the dark
  // scheme, and follow a switch between them.
  const usePageColours = () => {
    const pageStyle = getComputedStyle(document.documentElement);
    Chart.defaults.color = pageStyle.getPropertyValue("--text").trim() || "#1f2328";
    Chart.defaults.borderColor = pageStyle.getPropertyValue("--border").trim() || "#c9ced6";
  };
  usePageColours();
  window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => {
    usePageColours();
    for (const chart of Object.values(Chart.instances)) {
      chart.options.color = Chart.defaults.color;
      chart.options.borderColor = Chart.defaults.borderColor;
      for (const scale of Object.values(chart.options.scales || {})) {
        if (scale.ticks) scale.ticks.color = Chart.defaults.color;
        if (scale.title) scale.title.color = Chart.defaults.color;
        if (scale.grid) scale.grid.color = Chart.defaults.borderColor;
      }
      if (chart.options.plugins && chart.options.plugins.legend && chart.options.plugins.legend.labels) chart.options.plugins.legend.labels.color = Chart.defaults.color;
      chart.update("none");
    }
  });
  if (reducedMotion) Chart.defaults.animation = false;

  const requests = document.getElementById("usage-requests-chart");
  if (requests) {
    new Chart(requests, {
      type: "bar",
      data: {
        labels,
        datasets: report.series.map((series, index) => ({
          label: series.operation,
          data: series.requests,
          backgroundColor: PALETTE[index % PALETTE.length],
        })),
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: "Requests" } } },
        plugins: { legend: { position: "bottom" } },
      },
    });
  }

  const statuses = document.getElementById("usage-status-chart");
  if (statuses) {
    new Chart(statuses, {
      type: "bar",
      data: {
        labels: report.byStatus.map((row) => `HTTP ${row.status}`),
        datasets: [
          {
            label: "Requests",
            data: report.byStatus.map((row) => row.requests),
            backgroundColor: report.byStatus.map((row) => STATUS_COLOURS[Math.floor(row.status / 100)] || "#555555"),
          },
        ],
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        indexAxis: "y",
        scales: { x: { beginAtZero: true, ticks: { precision: 0 } } },
        plugins: { legend: { display: false } },
      },
    });
  }

  const compute = document.getElementById("usage-compute-chart");
  if (compute) {
    new Chart(compute, {
      type: "bar",
      data: {
        labels: report.byOperation.map((row) => row.operation),
        datasets: [
          {
            label: "Compute seconds",
            data: report.byOperation.map((row) => Number(row.computeSeconds.toFixed(3))),
            backgroundColor: report.byOperation.map((_, index) => PALETTE[index % PALETTE.length]),
          },
        ],
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        indexAxis: "y",
        scales: { x: { beginAtZero: true, title: { display: true, text: "Seconds" } } },
        plugins: { legend: { display: false } },
      },
    });
  }
}

// The filter form applies on change; its button stays for keyboard and no-script use.
const filters = document.getElementById("usage-filters");
if (filters) {
  for (const select of filters.querySelectorAll("select")) select.addEventListener("change", () => filters.requestSubmit());
}
