"""Model object stores: HDFS, S3 as of 2018, S3 today, GCS, ABFS (docs/research/design.md,
"Stores").

One class, :class:`~.store.ModelStore`, parameterised by a :class:`~.profiles.Profile`.  The
truth is a dict of objects; what a client *observes* may lag it:

* ``eventual_listing``: a new key enters the LIST index, and a deleted key leaves it, only when
  the harness settles that visibility event (S3 before December 2020).
* ``eventual_overwrite``: after an overwrite or delete, GET/HEAD may keep returning the old object
  until settled.
* ``negative_cache``: a GET/HEAD that found nothing is cached, so a later PUT of that key stays
  invisible to GET/HEAD until settled (the "404 caching" of S3 2018).

Nothing here calls ``random``: the pending visibility events are a list, and *which* one becomes
visible next is a choice the harness makes (:meth:`~.state.StoreState.settle`).  Every operation
counts as a request under its protocol name.

A package split by concern, each module importing only those above it in this list:

* :mod:`.profiles`: what each store is (:class:`~.profiles.Profile`, ``PROFILES``);
* :mod:`.records`: the values a store keeps (objects, pending visibility events, uploads);
* :mod:`.state`: the truth and the lag (:class:`~.state.StoreState`): writing, deleting and
  reading an object as the profile's consistency has it, and settling what lags;
* :mod:`.conditions`: conditional writes, as honest stores and the faulty ones do them;
* :mod:`.namespace`: directories, and rename (atomic or step by step);
* :mod:`.listing`: LIST, one page at a time;
* :mod:`.multipart`: multipart uploads;
* :mod:`.store`: :class:`~.store.ModelStore`, the store protocol over the state, counting
  requests;
* :mod:`.snapshot`: a read-only view of the objects, for checking what a reader would see.

Each family of operations is a module of functions over the one :class:`~.state.StoreState`
(composition, as the harness is built): the store is its state, and its protocol methods count
the request and hand it to the family's function.
"""
