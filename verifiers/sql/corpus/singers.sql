CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT, age INTEGER, is_male INTEGER);
INSERT INTO singer VALUES
 (1, 'Joe Sharp', 'Netherlands', 52, 1), (2, 'Timbaland', 'United States', 32, 1),
 (3, 'Justin Brown', 'France', 29, 1), (4, 'Rose White', 'France', 41, 0),
 (5, 'John Nizinik', 'France', 43, 1), (6, 'Tribal King', 'France', 25, 1),
 (7, 'Jeanne', 'Netherlands', 37, 0), (8, 'Cleo', 'United States', 29, 0);
CREATE TABLE concert (concert_id INTEGER PRIMARY KEY, concert_name TEXT, year TEXT);
INSERT INTO concert VALUES (1, 'Auditions', '2014'), (2, 'Super bootcamp', '2014'), (3, 'Home Visits', '2015'), (4, 'Week 1', '2015');
CREATE TABLE singer_in_concert (concert_id INTEGER, singer_id INTEGER, PRIMARY KEY (concert_id, singer_id));
INSERT INTO singer_in_concert VALUES (1, 2), (1, 3), (1, 5), (2, 3), (2, 6), (3, 5), (4, 4), (4, 3), (4, 1);
