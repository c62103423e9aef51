// Atelier console behaviour. Progressive enhancement only: every form works without this file.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  // Phones: the header's navigation and account fold behind the Menu button (console.css shows the
  // button below 48rem only).
  const menuToggle = document.querySelector(".menu-toggle");
  const menu = menuToggle && document.getElementById(menuToggle.getAttribute("aria-controls"));
  if (menuToggle && menu) {
    menuToggle.closest(".site-header").classList.add("menu-collapsible");
    menuToggle.hidden = false;
    menuToggle.addEventListener("click", () => {
      const open = menuToggle.getAttribute("aria-expanded") !== "true";
      menuToggle.setAttribute("aria-expanded", String(open));
      menu.classList.toggle("open", open);
    });
  }

  // Copy buttons: data-copy-target names the input whose value is copied.
  for (const button of document.querySelectorAll("[data-copy-target]")) {
    button.addEventListener("click", async () => {
      const input = document.getElementById(button.getAttribute("data-copy-target"));
      const status = button.parentElement.querySelector(".copy-status");
      if (!input) return;
      try {
        await navigator.clipboard.writeText(input.value);
        if (status) status.textContent = "Copied to the clipboard.";
      } catch {
        input.focus();
        input.select();
        if (status) status.textContent = "Selected: press Ctrl+C (or ⌘C) to copy.";
      }
    });
  }

  // Invite and setup links carry their code in the fragment (never sent to the server): move it
  // into the form and drop it from the address bar and history.
  const code = document.querySelector("[data-link-code]");
  if (code && location.hash.length > 1) {
    code.value = decodeURIComponent(location.hash.slice(1));
    history.replaceState(null, "", location.pathname);
  }

  // Move focus to what just appeared (an error summary, a new key), so keyboard and screen reader
  // users start there.
  const first = document.querySelector("[data-autofocus]");
  if (first) first.focus();
});
