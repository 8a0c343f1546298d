CREATE TABLE :schema.server_meta (key text PRIMARY KEY, value text NOT NULL);
