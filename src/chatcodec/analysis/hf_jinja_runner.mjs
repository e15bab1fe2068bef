// Render chat templates with @huggingface/jinja, each for several contexts (chatcodec doctor).
// Input (stdin, JSON): {"package": "<path of the @huggingface/jinja folder>",
//   "now": [year, month (1-12), day, hour, minute, second],
//   "jobs": [{"template": "...", "contexts": [{...}, ...]}, ...]}.
// Output (stdout, JSON): per job, [{"text": "..."} | {"error": "..."}, ...], one per context.
// The clock: the package has no way to set strftime_now's time, so Date is replaced by a class
// whose argument-less constructor (and Date.now) give the pinned local time.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const input = JSON.parse(readFileSync(0, "utf8"));
const RealDate = Date;
const pinned = new RealDate(input.now[0], input.now[1] - 1, input.now[2], input.now[3], input.now[4],
                            input.now[5]).getTime();
class PinnedDate extends RealDate {
  constructor(...args) { if (args.length === 0) { super(pinned); } else { super(...args); } }
  static now() { return pinned; }
}
globalThis.Date = PinnedDate;

const entry = JSON.parse(readFileSync(join(input.package, "package.json"), "utf8")).module;
const { Template } = await import(pathToFileURL(join(input.package, entry)).href);
function run(job) {
  let template;
  try {
    template = new Template(job.template);
  } catch (error) {
    return job.contexts.map(() => ({ error: `${error.name}: ${error.message}` }));
  }
  return job.contexts.map((context) => {
    try {
      return { text: template.render(context) };
    } catch (error) {
      return { error: `${error.name}: ${error.message}` };
    }
  });
}
process.stdout.write(JSON.stringify(input.jobs.map(run)));
