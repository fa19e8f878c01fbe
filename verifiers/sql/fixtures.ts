/**
 * Test fixtures: a Spider-shaped database (concert_singer, grown a little) with foreign keys,
 * NULLs, floats and duplicate values, built from one script that SQLite and PostgreSQL both run.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import Database from "better-sqlite3";
import { tempDir } from "../../tests/scratch.js";

export const SCHEMA = `
CREATE TABLE stadium (
  stadium_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  location TEXT,
  capacity INTEGER,
  average DOUBLE PRECISION
);
CREATE TABLE singer (
  singer_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  country TEXT,
  age INTEGER,
  net_worth DOUBLE PRECISION
);
CREATE TABLE concert (
  concert_id INTEGER PRIMARY KEY,
  concert_name TEXT,
  theme TEXT,
  stadium_id INTEGER REFERENCES stadium(stadium_id),
  year TEXT
);
CREATE TABLE singer_in_concert (
  concert_id INTEGER REFERENCES concert(concert_id),
  singer_id INTEGER REFERENCES singer(singer_id),
  PRIMARY KEY (concert_id, singer_id)
);
CREATE TABLE ticket (
  ticket_id INTEGER PRIMARY KEY,
  concert_id INTEGER REFERENCES concert(concert_id),
  price DOUBLE PRECISION,
  seat TEXT
);
`;

export const DATA = `
INSERT INTO stadium VALUES
  (1, 'Stark''s Park', 'Raith Rovers', 10104, 2106.5),
  (2, 'Somerset Park', 'Ayr United', 11998, 1477.25),
  (3, 'Bayview Stadium', 'East Fife', 2000, 864.0),
  (4, 'Hampden Park', 'Queen''s Park', 52500, NULL),
  (5, 'Forthbank Stadium', 'Stirling Albion', 3808, 730.0);
INSERT INTO singer VALUES
  (1, 'Joe Sharp', 'Netherlands', 52, 30.0),
  (2, 'Timbaland', 'United States', 32, 10.5),
  (3, 'Justin Brown', 'France', 29, 0.1),
  (4, 'Rose White', 'France', 41, 0.2),
  (5, 'John Nizinik', 'France', NULL, NULL),
  (6, 'Tribal King', 'France', 25, 3.3),
  (7, 'Kate Reed', 'United States', 30, 7.25);
INSERT INTO concert VALUES
  (1, 'Auditions', 'Free choice', 1, '2014'),
  (2, 'Super bootcamp', 'Free choice 2', 2, '2014'),
  (3, 'Home Visits', 'Bleeding Love', 2, '2015'),
  (4, 'Week 1', 'Wide Awake', 4, '2014'),
  (5, 'Week 1', 'Happy Tonight', 5, '2015'),
  (6, 'Week 2', 'Party All Night', 5, '2015');
INSERT INTO singer_in_concert VALUES
  (1, 2), (1, 3), (1, 5), (2, 3), (2, 6), (3, 5), (4, 4), (5, 6), (5, 3), (6, 2);
`;

/** 400 tickets: enough rows that a 6-way cross join never ends. */
export function ticketRows(): string {
  const rows: string[] = [];
  for (let i = 1; i <= 400; i++) rows.push(`(${i}, ${(i % 6) + 1}, ${((i * 37) % 200) / 4 + 10}, '${String.fromCharCode(65 + (i % 8))}${i % 50}')`);
  return `INSERT INTO ticket VALUES ${rows.join(", ")};`;
}

export const SCRIPT = SCHEMA + DATA + ticketRows();

/** Builds the fixture as <dir>/database/<id>/<id>.sqlite (Spider's layout); returns the dir and path. */
export function sqliteFixture(id = "concert_singer"): { dir: string; path: string } {
  const dir = tempDir("assay-sql-");
  const sub = join(dir, "database", id);
  mkdirSync(sub, { recursive: true });
  const path = join(sub, `${id}.sqlite`);
  const db = new Database(path);
  db.pragma("foreign_keys = ON");
  db.exec(SCRIPT);
  db.close();
  return { dir, path };
}

export function sha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}
