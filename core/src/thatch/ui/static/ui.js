// Asks before a change that cannot be undone (forms with data-confirm).
// Loaded as a file: the page's Content-Security-Policy forbids inline script.
document.addEventListener("submit", (event) => {
  const question = event.target.dataset && event.target.dataset.confirm;
  if (question && !window.confirm(question)) {
    event.preventDefault();
  }
});
