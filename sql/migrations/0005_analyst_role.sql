-- 0005 read-only analyst role. fairmon_grant_readonly(role) creates the role if missing (NOLOGIN; grant
-- it to login users) and grants SELECT on every table and view, now and for tables created later by the
-- migration owner. Idempotent; `fairmon db grant-readonly` calls it again. Where the migration user may
-- not create roles (some managed services), the migration only notices and skips: an admin runs
-- `fairmon db grant-readonly` later.

CREATE FUNCTION fairmon_grant_readonly(role_name text DEFAULT 'fairmon_analyst') RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = role_name) THEN
        BEGIN
            EXECUTE format('CREATE ROLE %I NOLOGIN', role_name);
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL;  -- created concurrently by another database's migration (roles are cluster-wide)
        END;
    END IF;
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), role_name);
    EXECUTE format('GRANT USAGE ON SCHEMA public TO %I', role_name);
    EXECUTE format('GRANT SELECT ON ALL TABLES IN SCHEMA public TO %I', role_name);
    EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO %I', role_name);
END;
$fn$;
REVOKE EXECUTE ON FUNCTION fairmon_grant_readonly(text) FROM PUBLIC;

DO $$
BEGIN
    PERFORM fairmon_grant_readonly('fairmon_analyst');
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'fairmon: cannot create/grant role fairmon_analyst here; run `fairmon db grant-readonly` as an admin';
END $$;
