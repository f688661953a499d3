// Background service worker: sends the scans the content script collects to svc. probe.js is
// @svc/probe's dist/index.js. An extension ships to users, so it authenticates with a lead token
// (mode 1), kept in chrome.storage; never put a signed API key (sk_live_...) in an extension.
import { createProbeClient, ProbeError } from './probe.js';

const SVC_URL = 'https://svc.example.com'; // also in manifest.json host_permissions

chrome.runtime.onMessage.addListener((message, _sender, reply) => {
  if (message?.type !== 'svc-scan') return false;
  send(message.scan).then(reply);
  return true; // reply asynchronously
});

async function send(scan) {
  const { svcToken } = await chrome.storage.local.get('svcToken');
  if (!svcToken) return { ok: false, error: 'no_token', detail: 'set svcToken in chrome.storage.local' };
  try {
    await createProbeClient({ baseUrl: SVC_URL, token: svcToken }).send(scan);
    return { ok: true };
  } catch (error) {
    if (error instanceof ProbeError) return { ok: false, error: error.error, detail: error.detail };
    throw error;
  }
}
