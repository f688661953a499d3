// Progressive enhancement for the landing page: the page works without this script; with it,
// copy buttons appear next to the token and the example.
const copyStatus = document.getElementById('copy-status');

for (const button of document.querySelectorAll<HTMLButtonElement>('button[data-copy]')) {
  const target = document.getElementById(button.dataset.copy ?? '');
  if (!target) continue;
  button.hidden = false;
  button.addEventListener('click', async () => {
    const text = target.textContent ?? '';
    try {
      await navigator.clipboard.writeText(text);
      if (copyStatus) copyStatus.textContent = `${button.dataset.label ?? 'Text'} copied to the clipboard.`;
    } catch {
      // No clipboard access (a plain-http origin): select the text so the keyboard can copy it.
      const range = document.createRange();
      range.selectNodeContents(target);
      getSelection()?.removeAllRanges();
      getSelection()?.addRange(range);
      if (copyStatus) copyStatus.textContent = 'Selected: press Ctrl+C (or ⌘C) to copy.';
    }
  });
}
