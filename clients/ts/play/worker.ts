// The web table's sealed seat in a Web Worker (issue 47): the same SealedSeat (../src/sealed),
// its deal machine and secrets, serving the page's calls (workerSide in play.ts) so that the
// key, the shuffle with its proof, the shares and the check of every other seat's step run off
// the page's main thread. Built by `npm run build:play` into qahwa_page/static/play-worker.js,
// which imports the chunk play.js shares (one copy of the core).
import { serveSealedSide } from "../src/sealed/side.js";

serveSealedSide(self as unknown as Parameters<typeof serveSealedSide>[0]);
