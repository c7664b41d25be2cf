// Keeps a session's page current: the server sends the live part of the page
// (rendered and escaped there) whenever it changes. A file, not inline
// script: the page's Content-Security-Policy allows only this origin's files.
document.addEventListener("DOMContentLoaded", () => {
  const live = document.getElementById("live");
  const note = document.getElementById("live-note");
  if (!live || !live.dataset.events || !window.EventSource) {
    return;
  }
  const events = new EventSource(live.dataset.events);
  events.addEventListener("update", (event) => {
    live.innerHTML = event.data;
    if (note) {
      note.textContent = "updated " + new Date().toLocaleTimeString();
    }
  });
  events.addEventListener("gone", () => {
    events.close();
    if (note) {
      note.textContent = "this session is gone (purged by the daemon)";
    }
  });
});
