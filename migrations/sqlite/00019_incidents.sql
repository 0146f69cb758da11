-- +goose Up
-- Incidents (domain/incident.go): the desk's items that failed the same
-- way — one type, one error class and code — kept, so people can triage
-- them: acknowledge, own, note, resolve, ignore, reopen. An item joins its
-- incident in the transaction that puts it on the desk and leaves it in the
-- one that takes it off; the counts are kept with the incident.
CREATE TABLE incidents (
    id              text PRIMARY KEY,
    type            text NOT NULL,
    error_class     text NOT NULL,
    error_code      text NOT NULL,
    namespaces      text NOT NULL DEFAULT '[]',
    message         text NOT NULL DEFAULT '',
    first_seen      datetime NOT NULL,
    last_seen       datetime NOT NULL,
    open_items      integer NOT NULL DEFAULT 0,
    total_items     integer NOT NULL DEFAULT 0,
    status          text NOT NULL,
    acknowledged_by text NOT NULL DEFAULT '',
    acknowledged_at datetime,
    owner           text NOT NULL DEFAULT '',
    owner_issuer    text NOT NULL DEFAULT '',
    owner_subject   text NOT NULL DEFAULT '',
    owner_name      text NOT NULL DEFAULT '',
    status_by       text NOT NULL DEFAULT '',
    status_at       datetime,
    notified_at     datetime,
    notified_total  integer NOT NULL DEFAULT 0,
    version         bigint NOT NULL DEFAULT 1,
    UNIQUE (type, error_class, error_code)
);
CREATE INDEX incidents_last_seen ON incidents (last_seen);

-- Which operations are an incident's items; left_at is set when the item
-- leaves the desk (an item that comes back joins again).
CREATE TABLE incident_items (
    incident_id  text NOT NULL REFERENCES incidents (id),
    operation_id text NOT NULL REFERENCES operations (id),
    entered_at   datetime NOT NULL,
    left_at      datetime,
    PRIMARY KEY (incident_id, operation_id)
);
CREATE INDEX incident_items_open ON incident_items (operation_id) WHERE left_at IS NULL;

-- The incident's timeline: Handoff's opening, reopening and resolving, and
-- every person's triage action, each of those also in the audit trail
-- (audit_id, on the system stream).
CREATE TABLE incident_events (
    id          text PRIMARY KEY,
    incident_id text NOT NULL REFERENCES incidents (id),
    at          datetime NOT NULL,
    actor       text NOT NULL DEFAULT '',
    action      text NOT NULL,
    text        text NOT NULL DEFAULT '',
    detail      text NOT NULL DEFAULT '',
    audit_id    text NOT NULL DEFAULT ''
);
CREATE INDEX incident_events_incident ON incident_events (incident_id, at);

-- The registrations held because an open item has the same content
-- (twin_unresolved): the incident pages mark those items. Few rows.
CREATE INDEX operations_twin_holds ON operations (namespace, fingerprint)
    WHERE state = 'awaiting_approval' AND last_error_code = 'twin_unresolved';

-- The items on the desk when incidents began to be kept join theirs now,
-- announced to nobody (their own notices went out when they entered). The
-- message is the latest item's: SQLite takes a bare column from the row
-- that MAX chose.
INSERT INTO incidents (id, type, error_class, error_code, namespaces, message, first_seen, last_seen,
                       open_items, total_items, status, notified_at, notified_total, version)
SELECT 'inc_' || lower(hex(randomblob(13))), type, COALESCE(last_error_class, ''), COALESCE(last_error_code, ''),
       json_group_array(DISTINCT namespace), COALESCE(last_error_message, ''), MIN(COALESCE(desk_entered_at, updated_at)),
       MAX(COALESCE(desk_entered_at, updated_at)), COUNT(*), COUNT(*), 'open', MAX(COALESCE(desk_entered_at, updated_at)), COUNT(*), 1
FROM operations WHERE state IN ('unknown_outcome', 'failed_terminal') AND namespace <> 'drill'
GROUP BY type, COALESCE(last_error_class, ''), COALESCE(last_error_code, '');
INSERT INTO incident_items (incident_id, operation_id, entered_at)
SELECT i.id, o.id, COALESCE(o.desk_entered_at, o.updated_at)
FROM operations o JOIN incidents i ON i.type = o.type AND i.error_class = COALESCE(o.last_error_class, '')
    AND i.error_code = COALESCE(o.last_error_code, '')
WHERE o.state IN ('unknown_outcome', 'failed_terminal') AND o.namespace <> 'drill';

-- +goose Down
DROP INDEX operations_twin_holds;
DROP TABLE incident_events;
DROP TABLE incident_items;
DROP TABLE incidents;
