/** The client's errors: each says in one line what happened and what it means. */

export class ClientError extends Error {}

/** The server answered 4xx/5xx with ``{"error": {"code", "message"}}``. */
export class ApiError extends ClientError {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfter: number | null = null,
    /** The server's signed refusal of a seat's request, as sent (a seat checks it). */
    readonly refusal: Record<string, unknown> | null = null,
  ) {
    super(`${status} ${code}: ${message}`);
  }
}

/** A request got no answer (or only 5xx/429) however often it was resent; it is kept in the
 * seat's requests without a receipt. */
export class Unanswered extends ClientError {}

/** A check of §3a.3/§3a.4 failed: this seat does not reveal, and the match is not its own. */
export class NotOurMatch extends ClientError {
  constructor(
    readonly matchId: string,
    readonly seat: number,
    readonly reason: string,
  ) {
    super(`match ${matchId}, seat ${seat}: not our match — ${reason}; this seat does not reveal`);
  }
}

/** The transcript disagrees with the lock or a receipt this seat holds (§3a.5). */
export class TranscriptMismatch extends ClientError {}

/** A clock check of §3a.8 failed, or the server ended the match by timeout while this seat
 * held a request it sent before the deadline: the match is disputed, the evidence kept. */
export class Disputed extends ClientError {}

/** A sealed table (qahwa-fair/3, its ruleset's ``"deal": "sealed"``) of a game this client has
 * no deal machine for (it plays sealed hokm, qahve and Iraqi dominoes). It refuses before it
 * makes, commits or reveals any secret, so the seat is left untouched for a client that does
 * (qahwa_client, ``qahwa house``). */
export class SealedUnsupported extends ClientError {
  constructor(
    readonly matchId: string | null,
    readonly game: string | null = null,
  ) {
    super(
      `${matchId === null ? "a sealed table" : `match ${matchId} is a sealed table`}${game === null ? "" : ` of ${game}`} ("deal": "sealed", qahwa-fair/3): ` +
        "this TypeScript client plays sealed hokm, qahve and iraqi_domino only (and none when made with sealed: false); nothing was committed or revealed. " +
        "Play the seat with the Python client (qahwa_client) or `qahwa house`",
    );
  }
}

// each error's name, as String(error) shows it (a minifier keeps these strings, not the class names)
for (const [name, cls] of Object.entries({ ClientError, ApiError, Unanswered, NotOurMatch, TranscriptMismatch, Disputed, SealedUnsupported })) {
  Object.defineProperty(cls.prototype, "name", { value: name, writable: true, configurable: true });
}
