// Identity providers' documents (discovery metadata, JWK sets) shared by the processes of one place, so that one of
// them fetches a document and the others take its copy: the Cache API on Workers (per data centre). Node has none:
// each process fetches for itself.

/** A document as fetched, with when it was fetched and how long it is fresh (absolute times, ms since the epoch). */
export interface IdpDocumentCopy {
  json: Record<string, unknown>;
  cacheControl: string | null;
  fetchedAt: number;
  freshUntil: number;
}

export interface IdpDocumentStore {
  /** The copy of the document at `url`, or undefined (none, or the store failed or was slow). */
  get(url: string): Promise<IdpDocumentCopy | undefined>;
  /** Keeps a copy until its `freshUntil`; rejects when the store failed. */
  put(url: string, copy: IdpDocumentCopy): Promise<void>;
}
