----------------------------- MODULE ObjectStore -----------------------------
(***************************************************************************)
(* An object store (paper Section V): PUT, GET, HEAD, DELETE, COPY, LIST   *)
(* and multipart uploads (initiate, upload part, complete, abort, list     *)
(* uploads), with conditional PUT / complete (If-None-Match: * ) when the  *)
(* store is strongly consistent.                                           *)
(*                                                                         *)
(*   Consistency = "strong"   : S3 since December 2020 (model profile s3). *)
(*   Consistency = "eventual" : S3 before it (model profile s3-2018): a    *)
(*     GET of a key never seen before sees a new object at once (create    *)
(*     consistency), but overwrites and deletes reach GET later, and LIST  *)
(*     answers from an index that lags every change (Section V: "a newly   *)
(*     created object may not be visible in the results of a LIST call,    *)
(*     or a newly deleted object still be listed as present").             *)
(*                                                                         *)
(* objs is the authoritative state: what every reader sees once the store  *)
(* has settled.  seen is what GET and HEAD answer now; listed is the       *)
(* listing index.  Sync(k) is the store catching up on key k.              *)
(* Keys are abstract: a "prefix" is the set of keys under it, so LIST of   *)
(* a prefix P is P \cap listed (no string prefix matching: dest/dataset1   *)
(* never lists dest/dataset10).                                            *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets, TLC

CONSTANTS Keys,         \* every key a run may use
          Data,         \* every value an object may hold
          Uploads,      \* multipart upload ids
          Consistency,  \* "strong" or "eventual"
          Absent        \* model value: no object, no data, no key

ASSUME Consistency \in {"eventual", "strong"}

VARIABLES objs,       \* [Keys -> Data \cup {Absent}]: the store once settled
          seen,       \* [Keys -> Data \cup {Absent}]: what GET/HEAD answer
          listed,     \* SUBSET Keys: what LIST answers
          uploads,    \* [Uploads -> record]: multipart uploads
          lastWrite   \* [Keys -> Uploads \cup {Absent}]: upload that wrote k last

storeVars == <<objs, seen, listed, uploads, lastWrite>>

UploadStates == {"none", "open", "done", "aborted"}

UploadRecords ==
  [st : UploadStates, key : {Absent} \cup Keys, data : {Absent} \cup Data]

TypeOK ==
  /\ objs \in [Keys -> {Absent} \cup Data]
  /\ seen \in [Keys -> {Absent} \cup Data]
  /\ listed \subseteq Keys
  /\ uploads \in [Uploads -> UploadRecords]
  /\ lastWrite \in [Keys -> {Absent} \cup Uploads]

Init ==
  /\ objs = [k \in Keys |-> Absent]
  /\ seen = [k \in Keys |-> Absent]
  /\ listed = {}
  /\ uploads = [u \in Uploads |-> [st |-> "none", key |-> Absent, data |-> Absent]]
  /\ lastWrite = [k \in Keys |-> Absent]

(***************************************************************************)
(* Reads: state functions, evaluated inside the caller's action.           *)
(***************************************************************************)
Get(k) == seen[k]                  \* GET: Absent is a 404
Head(k) == seen[k] # Absent        \* HEAD
List(P) == P \cap listed           \* LIST of the prefix P
\* list-multipart-uploads of a prefix; modelled as consistent
ListUploads(P) == {u \in Uploads : uploads[u].st = "open" /\ uploads[u].key \in P}

(***************************************************************************)
(* Writes.  Apply(ch, src) changes the keys in DOMAIN ch (Absent deletes)  *)
(* on behalf of upload src (Absent for a plain request).                   *)
(***************************************************************************)
Apply(ch, src) ==
  LET after == [k \in Keys |-> IF k \in DOMAIN ch THEN ch[k] ELSE objs[k]]
  IN  /\ objs' = after
      /\ lastWrite' = [k \in Keys |-> IF k \in DOMAIN ch THEN src ELSE lastWrite[k]]
      /\ IF Consistency = "strong"
           THEN /\ seen' = after
                /\ listed' = {k \in Keys : after[k] # Absent}
           ELSE \* create consistency only; the index lags every change
                /\ seen' = [k \in Keys |->
                              IF k \in DOMAIN ch /\ objs[k] = Absent /\ seen[k] = Absent
                                THEN ch[k] ELSE seen[k]]
                /\ listed' = listed

Put(k, d) == Apply(k :> d, Absent) /\ UNCHANGED uploads

\* PUT with If-None-Match: * ; only a strongly consistent store offers it
PutIfAbsent(k, d) ==
  /\ Consistency = "strong"
  /\ objs[k] = Absent
  /\ Put(k, d)

Delete(k) == Apply(k :> Absent, Absent) /\ UNCHANGED uploads

\* server-side COPY of what a GET of the source returns
Copy(s, d) ==
  /\ Get(s) # Absent
  /\ Apply(d :> Get(s), Absent)
  /\ UNCHANGED uploads

\* the connector's rename of one file: COPY then DELETE, taken as one step
Rename(s, d) ==
  /\ Get(s) # Absent
  /\ Apply((s :> Absent) @@ (d :> Get(s)), Absent)
  /\ UNCHANGED uploads

Initiate(u, k) ==
  /\ uploads[u].st = "none"
  /\ uploads' = [uploads EXCEPT ![u] = [st |-> "open", key |-> k, data |-> Absent]]
  /\ UNCHANGED <<objs, seen, listed, lastWrite>>

\* one part stands for all parts of the upload
UploadPart(u, d) ==
  /\ uploads[u].st = "open"
  /\ uploads' = [uploads EXCEPT ![u].data = d]
  /\ UNCHANGED <<objs, seen, listed, lastWrite>>

\* initiate and upload every part of an output stream, as one step
StartUpload(u, k, d) ==
  /\ uploads[u].st = "none"
  /\ uploads' = [uploads EXCEPT ![u] = [st |-> "open", key |-> k, data |-> d]]
  /\ UNCHANGED <<objs, seen, listed, lastWrite>>

\* complete-multipart-upload: the object appears at its key
Complete(u) ==
  /\ uploads[u].st = "open"
  /\ uploads[u].data # Absent
  /\ uploads' = [uploads EXCEPT ![u].st = "done"]
  /\ Apply(uploads[u].key :> uploads[u].data, u)

\* complete with If-None-Match: *
CompleteIfAbsent(u) ==
  /\ Consistency = "strong"
  /\ uploads[u].st = "open"
  /\ objs[uploads[u].key] = Absent
  /\ Complete(u)

Abort(u) ==
  /\ uploads[u].st = "open"
  /\ uploads' = [uploads EXCEPT ![u].st = "aborted"]
  /\ UNCHANGED <<objs, seen, listed, lastWrite>>

\* abort every upload in U (each must be open)
AbortAll(U) ==
  /\ \A u \in U : uploads[u].st = "open"
  /\ uploads' = [u \in Uploads |->
                   IF u \in U THEN [uploads[u] EXCEPT !.st = "aborted"] ELSE uploads[u]]
  /\ UNCHANGED <<objs, seen, listed, lastWrite>>

\* the store catches up on key k (never enabled under "strong")
Sync(k) ==
  /\ \/ seen[k] # objs[k]
     \/ (k \in listed) # (objs[k] # Absent)
  /\ seen' = [seen EXCEPT ![k] = objs[k]]
  /\ listed' = IF objs[k] = Absent THEN listed \ {k} ELSE listed \cup {k}
  /\ UNCHANGED <<objs, uploads, lastWrite>>

(***************************************************************************)
(* The store on its own: any client request at any time.                   *)
(***************************************************************************)
Next ==
  \/ \E k \in Keys, d \in Data : Put(k, d) \/ PutIfAbsent(k, d)
  \/ \E k \in Keys : Delete(k) \/ Sync(k)
  \/ \E s \in Keys, d \in Keys : s # d /\ Copy(s, d)
  \/ \E u \in Uploads :
       \/ \E k \in Keys : Initiate(u, k)
       \/ \E d \in Data : UploadPart(u, d)
       \/ Complete(u) \/ CompleteIfAbsent(u) \/ Abort(u)

Spec == Init /\ [][Next]_storeVars /\ \A k \in Keys : WF_storeVars(Sync(k))

(***************************************************************************)
(* Properties of the store itself.                                         *)
(***************************************************************************)
\* a strongly consistent store answers every read from the latest state
StrongReads ==
  Consistency = "strong" =>
    /\ seen = objs
    /\ listed = {k \in Keys : objs[k] # Absent}

\* GET of a key whose last write was a completed upload returns its data:
\* holds under "strong"; under "eventual" a completion that overwrites an
\* existing object is not seen at once (expected violation)
CompletedUploadVisible ==
  \A u \in Uploads :
    (uploads[u].st = "done" /\ lastWrite[uploads[u].key] = u)
      => Get(uploads[u].key) = uploads[u].data

\* liveness: every listing and read eventually catches up with the store
\* (needs the weak fairness of Sync in Spec)
ListingsEventuallyComplete ==
  \A k \in Keys :
    ((k \in listed) # (objs[k] # Absent)) ~> ((k \in listed) = (objs[k] # Absent))

ReadsEventuallyConsistent ==
  \A k \in Keys : (seen[k] # objs[k]) ~> (seen[k] = objs[k])
==============================================================================
