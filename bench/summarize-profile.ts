/**
 * Summarizes any V8 .cpuprofile (e.g. from `node --cpu-prof bin/sluice.js serve`):
 * `npx node bench/summarize-profile.ts FILE [REQUESTS]`, REQUESTS giving per-request numbers.
 */
import { readFileSync } from 'node:fs';
import { type CpuProfile, formatProfileSummary, summarizeProfile } from './profile-summary.ts';

const [file, requests] = process.argv.slice(2);
if (!file) {
  console.error('usage: npx node bench/summarize-profile.ts FILE.cpuprofile [REQUESTS]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
console.log(formatProfileSummary(summarizeProfile(profile, { top: 30, requests: requests ? Number(requests) : undefined })));
