---------------------------- MODULE StreamCommit ----------------------------
(***************************************************************************)
(* The batch-record protocol of zerorename's stream sink                   *)
(* (reference/zerorename/spark/streaming.py), with Spark's micro-batch     *)
(* driver around it.  The driver runs batches 0..Batches-1; for each, its  *)
(* task uploads one file (an uncompleted multipart upload), the sink       *)
(* creates the batch record naming it (the commit point), completes the    *)
(* recorded upload, aborts every other upload of the batch (its own, or    *)
(* those of runs that crashed before recording), and Spark then writes the *)
(* batch to its commit log.  The driver                                    *)
(* may crash between any two steps; the next run re-runs the first batch   *)
(* missing from the commit log, with the same batch id.                    *)
(*                                                                         *)
(* Conditional = TRUE: the record is created with If-None-Match: *, so a   *)
(* re-run leaves it as it is.  FALSE: a plain PUT, which a re-run          *)
(* overwrites (the broken sink the checks must catch).                     *)
(***************************************************************************)
EXTENDS Naturals

CONSTANTS Batches, MaxCrashes, Conditional

Ids == 0..(Batches - 1)
Runs == 0..MaxCrashes
NoRecord == MaxCrashes + 1

VARIABLES run, batch, pc, commitLog, uploads, published, record, crashes

vars == <<run, batch, pc, commitLog, uploads, published, record, crashes>>

TypeOK ==
    /\ run \in Runs /\ crashes \in 0..MaxCrashes
    /\ batch \in 0..Batches
    /\ pc \in {"write", "record", "publish", "clean", "spark"}
    /\ commitLog \subseteq Ids
    /\ uploads \subseteq (Runs \X Ids)
    /\ published \subseteq (Runs \X Ids)
    /\ record \in [Ids -> Runs \cup {NoRecord}]

Init ==
    /\ run = 0 /\ batch = 0 /\ pc = "write" /\ commitLog = {}
    /\ uploads = {} /\ published = {}
    /\ record = [b \in Ids |-> NoRecord] /\ crashes = 0

Write ==
    /\ batch < Batches /\ pc = "write"
    /\ uploads' = uploads \cup {<<run, batch>>}
    /\ pc' = "record"
    /\ UNCHANGED <<run, batch, commitLog, published, record, crashes>>

Record ==
    /\ pc = "record"
    /\ IF Conditional /\ record[batch] # NoRecord
         THEN UNCHANGED record                              \* 412: committed before
         ELSE record' = [record EXCEPT ![batch] = run]
    /\ pc' = "publish"
    /\ UNCHANGED <<run, batch, commitLog, uploads, published, crashes>>

Publish ==
    /\ pc = "publish"
    /\ LET w == <<record[batch], batch>> IN
         IF w \in uploads
           THEN /\ uploads' = uploads \ {w}
                /\ published' = published \cup {w}
           ELSE UNCHANGED <<uploads, published>>
    /\ pc' = "clean"
    /\ UNCHANGED <<run, batch, commitLog, record, crashes>>

Clean ==
    /\ pc = "clean"
    /\ uploads' = {u \in uploads : u[2] # batch}     \* every run's, of this batch
    /\ pc' = "spark"
    /\ UNCHANGED <<run, batch, commitLog, published, record, crashes>>

SparkCommit ==
    /\ pc = "spark"
    /\ commitLog' = commitLog \cup {batch}
    /\ batch' = batch + 1
    /\ pc' = "write"
    /\ UNCHANGED <<run, uploads, published, record, crashes>>

\* Spark's commit log holds every batch below the current one, so the restart
\* re-runs the current batch, with the same id.
Crash ==
    /\ batch < Batches /\ crashes < MaxCrashes
    /\ crashes' = crashes + 1 /\ run' = run + 1
    /\ pc' = "write"
    /\ UNCHANGED <<batch, commitLog, uploads, published, record>>

Done == batch = Batches /\ UNCHANGED vars

Next == Write \/ Record \/ Publish \/ Clean \/ SparkCommit \/ Crash \/ Done

Spec == Init /\ [][Next]_vars

(* A listing reader sees only files a batch record names: nothing of an    *)
(* uncommitted or repeated attempt.                                        *)
ListingCommittedOnly == \A f \in published : record[f[2]] = f[1]

(* A reader of the records sees each batch at most once (one record per    *)
(* batch id, naming one attempt), and once Spark has committed a batch the *)
(* file its record names is published.                                     *)
Committed == \A b \in commitLog : <<record[b], b>> \in published

(* When the query has finished, every batch is visible, and no upload is   *)
(* left pending.                                                           *)
Finished == batch = Batches => (commitLog = Ids /\ uploads = {})
=============================================================================
