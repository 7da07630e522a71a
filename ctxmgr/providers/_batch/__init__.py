"""Summaries through the providers' Batch APIs: sent together, answered later, at about half the price.

Not :mod:`ctxmgr.files` (which compacts many files in one run): this package hands the
summary requests of a run to OpenAI's Batch API or the Gemini API's batch mode and
brings their answers back.

How a run goes (``ctxmgr summarize --batch``, see :mod:`ctxmgr.providers._batch.run`):

1. The run is made once without writing anything, through a :class:`BatchCollector`
   in place of the model: every request is answered from the batch answers already
   fetched (:class:`BatchAnswers`) or the summary cache, and every other one is
   recorded as pending and answered with a placeholder. A request built from a
   placeholder (combining the summaries of parts, asking again for missing facts)
   waits for the next round: it is not sent.
2. Pending requests not already in a job are sent as new jobs (split past the
   provider's limits, ``OPENAI_MAX_REQUESTS``...) and recorded in the state file
   (:class:`BatchState`); the command exits 75 (``EX_TEMPFAIL``).
3. A later run polls the jobs; the answers of the finished ones go to
   :class:`BatchAnswers` (beside the state file, kept until the output is written) and
   to the summary cache. Once a run finds nothing pending, the output is written by
   the same code as an interactive run, with the answers coming from there.

The state and answers files are input (a repository can carry files under their
names): the address a key goes to comes from the run's own settings, never from the
state (:meth:`BatchState.check_address`); the answers are believed only beside a state
made here, for the same output and the requests of its jobs (:class:`BatchAnswers`,
:func:`state_records_folder`); and only a job's own requests' answers, scrubbed of
credentials, are kept or cached.

Each job carries a tag (OpenAI metadata ``ctxmgr_batch``, Gemini display name
``ctxmgr-summaries-TAG``): a hash of the requests it holds and of what answers them.
A lost state file costs a lookup: the next run builds the same requests, groups them
alike (:func:`chunk_requests`) and finds each job by its tag among the provider's most
recent :data:`~ctxmgr.providers._batch.client.FIND_LIMIT` jobs; a job not found there is sent again.

Gemini jobs carry their requests inline up to :data:`~ctxmgr.providers._batch.gemini_jobs.GEMINI_MAX_BYTES`, and as an
uploaded JSONL file (``files.upload``, answers through ``files.download``) past it.

Vertex AI's batch prediction reads its input from Cloud Storage or BigQuery, which
ctxmgr does not use: batch mode with ``GOOGLE_GENAI_USE_VERTEXAI`` is refused.

The modules: :mod:`.state` (the state and answers files), :mod:`.collector` (the
summarizer that collects the requests, and their grouping into jobs), :mod:`.client`
(what every provider's batch client offers, and the client of a run's provider, found
through the provider registry), :mod:`.openai_jobs` and :mod:`.gemini_jobs` (the
providers' batch APIs), :mod:`.run` (one ``summarize --batch`` command, step by step).
"""
